/**
 * Helpers of the cluster tests: a real nats-server on loopback (port 0) in a temporary folder, and the smoke run's
 * config as a learner and its workers use it; Crucible's commands start from ../subprocess.ts (`spawnCli`). A
 * test that needs nats-server is ignored where it is not installed, except under CI (CI set), where .ci/run
 * installs it and its absence must fail.
 */
import { type NatsServer, natsServerInstalled, startNatsServer } from "../../src/cluster/server.ts";
import { RL_ONLY, smokeArgs, writeSmokeModel } from "../../bench/smoke_run.ts";

/** True where the cluster tests cannot run: no nats-server, outside CI. */
export const noNats: boolean = !(await natsServerInstalled()) && !Deno.env.get("CI");

/** A server with JetStream (or without) on a free loopback port. */
export async function natsServer(dir: string, o: { jetstream?: boolean; port?: number } = {}): Promise<NatsServer> {
  return await startNatsServer({ dataDir: `${dir}/nats`, port: o.port ?? 0, jetstream: o.jetstream });
}

/** The learner's config file and overrides: the smoke run (2 prompts × 2 episodes) as RL alone, 3 steps. */
export async function learnerArgs(dir: string, extra: string[] = []): Promise<string[]> {
  await writeSmokeModel(`${dir}/tiny.yaml`);
  await Deno.writeTextFile(`${dir}/run.yaml`, "task: textcraft\n");
  return [
    `${dir}/run.yaml`,
    ...smokeArgs(`${dir}/tiny.yaml`, RL_ONLY),
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
