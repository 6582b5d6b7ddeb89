/**
 * Helpers of the cluster tests: a real nats-server on loopback (port 0) in a temporary folder, Crucible's commands
 * as subprocesses with their output collected, and the smoke run's config as a learner and its workers use it. A
 * test that needs nats-server is ignored where it is not installed, except under CI (CI set), where .ci/run
 * installs it and its absence must fail.
 */
import { type NatsServer, natsServerInstalled, startNatsServer } from "../../src/cluster/server.ts";
import { SMOKE_MODEL_YAML } from "../../src/bench/smoke_run.ts";

const ROOT = new URL("../../", import.meta.url).pathname;

/** True where the cluster tests cannot run: no nats-server, outside CI. */
export const noNats: boolean = !(await natsServerInstalled()) && !Deno.env.get("CI");

/** A server with JetStream (or without) on a free loopback port. */
export async function natsServer(dir: string, o: { jetstream?: boolean; port?: number } = {}): Promise<NatsServer> {
  return await startNatsServer({ dataDir: `${dir}/nats`, port: o.port ?? 0, jetstream: o.jetstream });
}

/** A running Crucible command. */
export interface Proc {
  child: Deno.ChildProcess;
  /** stdout and stderr so far. */
  output(): string;
  /** Resolves when it exits, with its code and signal. */
  done: Promise<Deno.CommandStatus>;
}

/** Starts `deno run -A src/cli/main.ts ...args` at the repository root. */
export function spawnCli(args: string[], env: Record<string, string> = {}): Proc {
  const child = new Deno.Command(Deno.execPath(), {
    args: ["run", "-A", "src/cli/main.ts", ...args],
    cwd: ROOT,
    env,
    stdout: "piped",
    stderr: "piped",
  }).spawn();
  let text = "";
  const collect = async (s: ReadableStream<Uint8Array>) => {
    const d = new TextDecoder();
    for await (const chunk of s) text += d.decode(chunk, { stream: true });
  };
  const streams = Promise.all([collect(child.stdout), collect(child.stderr)]);
  return { child, output: () => text, done: streams.then(() => child.status) };
}

/** Ends a process started by this test (SIGTERM) and waits for it. */
export async function end(p: Proc): Promise<void> {
  try {
    p.child.kill("SIGTERM");
  } catch { /* already exited */ }
  await p.done;
}

/** The learner's config file and overrides: the smoke run's model, 2 prompts × 2 episodes, 3 steps, no SFT. */
export async function learnerArgs(dir: string, extra: string[] = []): Promise<string[]> {
  await Deno.writeTextFile(`${dir}/tiny.yaml`, SMOKE_MODEL_YAML);
  await Deno.writeTextFile(`${dir}/run.yaml`, "task: textcraft\n");
  return [
    `${dir}/run.yaml`,
    `model.tiny=${dir}/tiny.yaml`,
    "data.train_batch_size=2",
    "rollout.n=2",
    "rollout.max_tokens_per_turn=6",
    "rollout.max_response_length=96",
    "rollout.max_prompt_length=1200",
    "algorithm.rounds_ctrl.type=fixed",
    "algorithm.rounds_ctrl.rounds=[2]",
    "actor.ppo_mini_batch_size=1",
    "sft.enabled=false",
    "trainer.save_freq=0",
    "trainer.test_freq=0",
    "trainer.eval_limit=1",
    "trainer.total_steps=3",
    // Gradients that depend on every sampled token, and the sampler's own log-probs in the loss: a run that
    // differs anywhere in what the workers sampled ends with different parameters.
    "actor.lr=0.01",
    "actor.entropy_coeff=0.01",
    "actor.kl_loss_coef=0.1",
    "actor.recompute_old_logprob=false",
    "cluster.ack_wait_s=3",
    ...extra,
  ];
}

/** The metrics lines of a run folder. */
export async function metrics(runDir: string): Promise<Record<string, number>[]> {
  const text = await Deno.readTextFile(`${runDir}/metrics.jsonl`);
  return text.trim().split("\n").map((l) => JSON.parse(l));
}
