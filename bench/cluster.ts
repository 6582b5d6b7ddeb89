/**
 * `deno task bench cluster [--workers 1,2,3] [--steps N] [--delay-ms MS] [--staleness K] [--json]`: the learner
 * with 1, 2 and 3 local rollout workers over a local nats-server, against the in-process run, on a TextCraft server
 * whose every step sleeps (so that the environment, not the CPU, sets the pace, as it does for WebShop or a
 * browser). Episodes per second and GRPO steps per 10 minutes are taken over the steady steps (step 2 to the last:
 * step 1 holds start-up, the workers' model load and the first version's upload). `overhead` is the one-worker run
 * at rollout.max_staleness=0 against the in-process run: the cost of the queue itself. `overlap` is the in-process
 * run at rollout.max_staleness=K (one-step-off: the next step's rollouts during this step's update) against the one
 * at 0. Every process shares this machine's CPU, so extra workers add decode capacity only where cores are free.
 *
 * `--job textcraft` measures the default job instead (configs/textcraft.yaml, shortened: no warm start, `--steps` RL
 * steps, a final evaluation of `--eval-limit` test tasks, no checkpoints, no added delay): its whole wall time in
 * process, with `--cluster` and one local worker, and in process at max_staleness=K.
 */
import { serveTextCraft } from "../tasks/textcraft/game/server.ts";
import { startNatsServer } from "../src/cluster/server.ts";
import { dryRun, numberFlag, parseFlags } from "../src/command/args.ts";
import { RL_ONLY, smokeArgs, writeSmokeModel } from "./smoke_run.ts";
import { PROGRAM } from "./program.ts";

/** Usage text of the `cluster` subcommand. */
export const CLUSTER_USAGE =
  `Usage: deno task bench cluster [--workers 1,2,3] [--steps N] [--delay-ms MS] [--staleness K] [--job textcraft] [--in-process]
                               [--json]

Learner plus 1, 2 and 3 local workers (NATS JetStream, nats-server installed by bash .ci/setup --cluster) against
the in-process run, on TextCraft with a sleep in every environment step: episodes/s, GRPO steps per 10 min, the
speedup of each worker count, the one-worker run's overhead at max_staleness=0, and the in-process run's gain at
max_staleness=K (one-step-off). A few minutes at the defaults.

Options:
  --workers LIST   worker counts to run (default 1,2,3)
  --steps N        RL steps per run, at least 2; the first is start-up and not timed (default 4)
  --rounds R       rounds per episode (default 10; more rounds, more of each step is the environment's)
  --delay-ms MS    sleep added to every environment step (default 100)
  --staleness K    rollout.max_staleness of the worker runs and of the one-step-off in-process run (default 1)
  --job textcraft  the default job, shortened (see above), instead of the delayed smoke runs; --steps defaults to 3
  --eval-limit N   with --job: test tasks of the final evaluation (default 4)
  --in-process     only the in-process runs (max_staleness 0 and K): what one-step-off gains in one process
                   (with --job too)
  --json           end with one JSON line (speedup3, overhead, overlap, and every run)

Examples:
  deno task bench cluster
  deno task bench cluster --workers 1,3 --steps 3 --rounds 6 --json
  deno task bench cluster --job textcraft --steps 3
  deno task bench cluster --in-process --steps 4`;

/** One run's figures. */
export interface ClusterRun {
  name: string;
  workers: number;
  staleness: number;
  episodesPerSecond: number;
  stepsPer10Min: number;
  wallSeconds: number;
  /** Means over the steady steps: the learner's rollout phase (waiting for groups, with workers), its update. */
  rolloutSeconds: number;
  updateSeconds: number;
}

/** The subcommand. */
export async function main(args: string[]): Promise<void> {
  const { values: v } = parseFlags("deno task bench cluster", {
    args,
    options: {
      workers: { type: "string" },
      steps: { type: "string" },
      rounds: { type: "string" },
      "delay-ms": { type: "string" },
      staleness: { type: "string" },
      job: { type: "string" },
      "in-process": { type: "boolean" },
      "eval-limit": { type: "string" },
      json: { type: "boolean" },
      help: { type: "boolean", short: "h" },
    },
  });
  if (v.help) return console.log(CLUSTER_USAGE);
  const counts = (v.workers ?? "1,2,3").split(",").map((w) =>
    numberFlag("--workers", w, 1, { lo: 1, hi: 16, integer: true })
  );
  if (v.job !== undefined && v.job !== "textcraft") {
    throw new RangeError(`--job ${v.job}: only the default job, --job textcraft, is measured`);
  }
  const steps = numberFlag("--steps", v.steps, v.job ? 3 : 4, { lo: 2, hi: 1000, integer: true });
  const evalLimit = numberFlag("--eval-limit", v["eval-limit"], 4, { lo: 1, hi: 10_000, integer: true });
  const rounds = numberFlag("--rounds", v.rounds, 10, { lo: 1, hi: 100, integer: true });
  const delayMs = numberFlag("--delay-ms", v["delay-ms"], 100, { lo: 0, hi: 60_000 });
  const staleness = numberFlag("--staleness", v.staleness, 1, { lo: 0, hi: 100, integer: true });
  if (dryRun(v.job ? "would measure the default job" : `would measure ${counts.join(", ")} workers`)) return;
  if (v.job) return await jobBench({ steps, evalLimit, staleness, json: v.json === true, inProcess: v["in-process"] });
  const dir = await Deno.makeTempDir({ prefix: "crucible-bench-cluster-" });
  const env = await delayedTextCraft(delayMs);
  const say = (s: string) => v.json ? console.error(s) : console.log(s);
  try {
    await writeSmokeModel(`${dir}/tiny.yaml`);
    await Deno.writeTextFile(`${dir}/run.yaml`, "task: textcraft\n");
    const base = runArgs(dir, env.url, steps, rounds);
    const runs: ClusterRun[] = [];
    const record = (r: ClusterRun) => {
      runs.push(r);
      say(
        `${r.name.padEnd(28)} ${r.episodesPerSecond.toFixed(2).padStart(7)} episodes/s  ` +
          `${r.stepsPer10Min.toFixed(1).padStart(6)} steps/10 min  per step: rollout ${
            r.rolloutSeconds.toFixed(2)
          } s, ` +
          `update ${r.updateSeconds.toFixed(2)} s  wall ${r.wallSeconds.toFixed(0)} s`,
      );
    };
    record(await timedRun(dir, "in-process", base, 0, 0));
    record(await timedRun(dir, `in-process, max_staleness=${staleness}`, base, 0, staleness));
    if (v["in-process"]) {
      const overlap = runs[1].episodesPerSecond / runs[0].episodesPerSecond;
      say(`one-step-off in process ${overlap.toFixed(2)}x (${delayMs} ms per environment step, ${rounds} rounds)`);
      if (v.json) console.log(JSON.stringify({ overlap, delayMs, rounds, steps, staleness, runs }));
      return;
    }
    record(await timedRun(dir, "1 worker, max_staleness=0", base, 1, 0));
    for (const w of counts) {
      record(await timedRun(dir, `${w} worker(s), max_staleness=${staleness}`, base, w, staleness));
    }
    const inproc = runs[0].episodesPerSecond;
    const byCount = (w: number) => runs.slice(3).find((r) => r.workers === w);
    const speedups = Object.fromEntries(counts.map((w) => [`speedup${w}`, byCount(w)!.episodesPerSecond / inproc]));
    // Per steady step: the one-worker queue run's time over the in-process run's.
    const overhead = inproc / runs[2].episodesPerSecond - 1;
    const overlap = runs[1].episodesPerSecond / inproc;
    const speedText = counts.map((w) => `speedup${w} ${speedups[`speedup${w}`].toFixed(2)}x`).join("  ");
    say(
      `${speedText}  overhead ${(100 * overhead).toFixed(1)}%  one-step-off in process ${
        overlap.toFixed(2)
      }x (${delayMs} ms per environment step, ${rounds} ` +
        `rounds, ${steps} steps per run; every process here shares this machine's CPU)`,
    );
    if (v.json) {
      console.log(JSON.stringify({ ...speedups, overhead, overlap, delayMs, rounds, steps, staleness, runs }));
    }
  } finally {
    await env.close();
    await Deno.remove(dir, { recursive: true }).catch(() => {});
  }
}

/**
 * The default job, shortened: in process at max_staleness 0, with --cluster and one local worker at 0, in process at
 * `staleness`; whole wall times (start-up, RL steps, the final evaluation) and the steady steps' rates.
 */
async function jobBench(
  o: { steps: number; evalLimit: number; staleness: number; json: boolean; inProcess?: boolean },
): Promise<void> {
  const dir = await Deno.makeTempDir({ prefix: "crucible-bench-job-" });
  const say = (s: string) => o.json ? console.error(s) : console.log(s);
  const base = [
    "textcraft",
    "sft.enabled=false",
    `trainer.total_steps=${o.steps}`,
    "trainer.test_freq=0",
    "trainer.save_freq=0",
    `trainer.eval_limit=${o.evalLimit}`,
  ];
  say(`configs/textcraft.yaml with ${base.slice(1).join(" ")}`);
  try {
    const runs: ClusterRun[] = [];
    for (
      const [name, workers, k] of [
        ["in-process, max_staleness=0", 0, 0],
        ["1 worker, max_staleness=0", 1, 0],
        [`in-process, max_staleness=${o.staleness}`, 0, o.staleness],
      ] as const
    ) {
      if (o.inProcess && workers > 0) continue;
      const r = await timedRun(dir, name, base, workers, k);
      runs.push(r);
      say(
        `${name.padEnd(28)} wall ${r.wallSeconds.toFixed(1)} s  ${r.episodesPerSecond.toFixed(2)} episodes/s over ` +
          `steps 2-${o.steps}  per step: rollout ${r.rolloutSeconds.toFixed(1)} s, update ${
            r.updateSeconds.toFixed(1)
          } s`,
      );
    }
    if (o.inProcess) {
      const overlap = runs[0].wallSeconds / runs[1].wallSeconds;
      say(`one-step-off in process: ${overlap.toFixed(2)}x faster by wall time`);
      if (o.json) console.log(JSON.stringify({ overlap, steps: o.steps, runs }));
      return;
    }
    const overhead = runs[1].wallSeconds / runs[0].wallSeconds - 1;
    const steadyOverhead = runs[0].episodesPerSecond / runs[1].episodesPerSecond - 1;
    const overlap = runs[0].wallSeconds / runs[2].wallSeconds;
    say(
      `overhead ${(100 * overhead).toFixed(1)}% of the wall time (${(100 * steadyOverhead).toFixed(1)}% over the ` +
        `steady steps); one-step-off in process: ${overlap.toFixed(2)}x faster by wall time`,
    );
    if (o.json) console.log(JSON.stringify({ overhead, steadyOverhead, overlap, steps: o.steps, runs }));
  } finally {
    await Deno.remove(dir, { recursive: true }).catch(() => {});
  }
}

/** The run's config: the smoke model, 4 prompts × 4 episodes of `rounds` rounds per step, no warm start. */
function runArgs(dir: string, envUrl: string, steps: number, rounds: number): string[] {
  // The smoke run as RL alone (as the cluster tests' learner), wider: 4 prompts × 4 episodes of `rounds` rounds.
  return [
    `${dir}/run.yaml`,
    ...smokeArgs(`${dir}/tiny.yaml`, RL_ONLY),
    `env.urls=["${envUrl}"]`,
    "data.train_batch_size=4",
    "rollout.n=4",
    `rollout.max_response_length=${Math.min(60 * rounds, 840)}`, // the smoke model has 2048 positions
    `algorithm.rounds_ctrl.rounds=[${rounds}]`,
    "actor.ppo_mini_batch_size=4",
    "actor.lr=0.01",
    `trainer.total_steps=${steps}`,
  ];
}

/** A learner (with `workers` workers over a fresh nats-server when > 0), timed over its steady steps. */
async function timedRun(
  dir: string,
  name: string,
  base: string[],
  workers: number,
  staleness: number,
): Promise<ClusterRun> {
  const runDir = `${dir}/run-${crypto.randomUUID()}`;
  const args = ["train", ...base, `rollout.max_staleness=${staleness}`, "--run-dir", runDir];
  // A step's 4 groups spread over the workers rather than all going to the first that asks (one worker takes all).
  if (workers > 1) args.push(`cluster.max_groups=${Math.ceil(4 / workers)}`);
  const t0 = performance.now();
  if (workers === 0) {
    await command(args).done;
  } else {
    const server = await startNatsServer({ dataDir: `${runDir}-nats`, port: 0 });
    const ws = Array.from(
      { length: workers },
      (_, i) => command(["worker", "--cluster", server.url, "--name", `w${i}`]),
    );
    try {
      await command([...args, "--cluster", server.url]).done;
    } finally {
      for (const w of ws) w.kill();
      await Promise.all(ws.map((w) => w.done.catch(() => {})));
      await server.stop();
    }
  }
  const wallSeconds = (performance.now() - t0) / 1000;
  const lines = (await Deno.readTextFile(`${runDir}/metrics.jsonl`)).trim().split("\n").map((l) => JSON.parse(l));
  const steady = lines.slice(1);
  const seconds = (Date.parse(lines[lines.length - 1].time) - Date.parse(lines[0].time)) / 1000;
  const episodes = steady.reduce((n: number, m: { episodes: number }) => n + m.episodes, 0);
  return {
    name,
    workers,
    staleness,
    episodesPerSecond: episodes / seconds,
    stepsPer10Min: (600 * steady.length) / seconds,
    wallSeconds,
    rolloutSeconds: mean(steady.map((m: Record<string, number>) => m.time_rollout_s)),
    updateSeconds: mean(steady.map((m: Record<string, number>) => m.time_logprobs_s + m.time_update_s)),
  };
}

function mean(xs: number[]): number {
  return xs.reduce((a, b) => a + b, 0) / xs.length;
}

/** A Crucible command in a subprocess; its output is kept and shown only if it fails. */
function command(args: string[]): { done: Promise<void>; kill(): void } {
  const child = new Deno.Command(Deno.execPath(), {
    args: ["run", "-A", PROGRAM, ...args],
    stdout: "piped",
    stderr: "piped",
  }).spawn();
  let killed = false;
  const done = child.output().then((r) => {
    if (!r.success && !killed) {
      const d = new TextDecoder();
      throw new Error(`deno task ${args[0]} failed (${r.code}):\n${d.decode(r.stderr).slice(-3000)}`);
    }
  });
  return {
    done,
    kill() {
      killed = true;
      try {
        child.kill("SIGTERM");
      } catch { /* exited */ }
    },
  };
}

/** TextCraft on loopback behind a proxy that sleeps `delayMs` before every /step. */
async function delayedTextCraft(delayMs: number): Promise<{ url: string; close(): Promise<void> }> {
  const tc = await serveTextCraft({ port: 0 });
  const proxy = Deno.serve({ hostname: "127.0.0.1", port: 0, onListen() {} }, async (req) => {
    const u = new URL(req.url);
    if (u.pathname === "/step") await new Promise((r) => setTimeout(r, delayMs));
    return await fetch(`${tc.url}${u.pathname}${u.search}`, {
      method: req.method,
      headers: req.headers,
      body: req.body,
    });
  });
  return {
    url: `http://127.0.0.1:${proxy.addr.port}`,
    async close() {
      await proxy.shutdown();
      await tc.shutdown();
    },
  };
}
