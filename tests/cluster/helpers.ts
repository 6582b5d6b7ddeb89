/**
 * Helpers of the cluster tests: a real nats-server on loopback (port 0) in a temporary folder, and the smoke run's
 * config as a learner and its workers use it; Crucible's commands start from ../subprocess.ts (`spawnCli`). A
 * test that needs nats-server is ignored where it is not installed, except under CI (CI set), where .ci/run
 * installs it and its absence must fail.
 */
import { type NatsServer, natsServerInstalled, startNatsServer } from "../../src/cluster/server.ts";
import { SMOKE_MODEL_YAML } from "../../bench/smoke_run.ts";

/** True where the cluster tests cannot run: no nats-server, outside CI. */
export const noNats: boolean = !(await natsServerInstalled()) && !Deno.env.get("CI");

/** A server with JetStream (or without) on a free loopback port. */
export async function natsServer(dir: string, o: { jetstream?: boolean; port?: number } = {}): Promise<NatsServer> {
  return await startNatsServer({ dataDir: `${dir}/nats`, port: o.port ?? 0, jetstream: o.jetstream });
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
