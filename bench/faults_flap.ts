/**
 * The `flap` section of `bench faults` (issue 32): a training run against three TextCraft servers while one of them
 * flaps, each server behind a counting fault proxy on loopback. The flapping one is, in turn, killed and restarted on
 * its port every `periodS` seconds (connections refused while down) and answering every request 503 every other
 * `periodS` (with env.retries=0, so each 503 reaches the client). Per run: exit code, wall time, steps completed and
 * abandoned, RL episodes and how many the environment failed (on a create, or mid-episode), and the requests each
 * server answered.
 */
import { serveTextCraft, type TextCraftServer } from "../tasks/textcraft/game/server.ts";
import { faultProxy } from "./fault_proxy.ts";
import { SMOKE_RUN } from "./smoke_run.ts";

/** One flapping run's figures. */
export interface FlapRun {
  how: string;
  code: number;
  seconds: number;
  stepsCompleted: number;
  abandoned: number;
  episodes: number;
  envFailures: number;
  /** Failed episodes whose failure was their create (the client tries the other servers first). */
  failedCreates: number;
  /** Times the flapping server went down and came back during the run. */
  cycles: number;
  /** Requests answered by each steady server, and by the flapping one (passed through, and 503s). */
  served: { steady: number[]; flapping?: number; flapping503: number };
}

type Cli = (args: string[], env?: Record<string, string>) => Promise<{ code: number; out: string; err: string }>;

const lines = async (path: string) =>
  (await Deno.readTextFile(path).catch(() => "")).trim().split("\n").filter((l) => l).map((l) => JSON.parse(l));

/** Runs the two flapping runs of `steps` RL steps; `say` gets one line each. */
export async function flapProbes(
  dir: string,
  cli: Cli,
  say: (s: string) => void,
  o: { steps?: number; periodS?: number } = {},
): Promise<FlapRun[]> {
  const out: FlapRun[] = [];
  for (const how of ["killed and restarted", "503 half the time"] as const) {
    const r = await flapRun(dir, cli, how, o.steps ?? 8, (o.periodS ?? 1.5) * 1000);
    out.push(r);
    say(
      `  third server ${how}: exit ${r.code} in ${r.seconds.toFixed(0)} s; ${r.stepsCompleted} steps completed, ` +
        `${r.abandoned} abandoned; ${r.envFailures} of ${r.episodes} RL episodes failed (${r.failedCreates} on a ` +
        `create); down and back ${r.cycles} times; requests served ${r.served.steady.join(" / ")} / ` +
        (r.served.flapping === undefined
          ? "(not counted)"
          : `${r.served.flapping} (+${r.served.flapping503} answered 503)`),
    );
  }
  return out;
}

async function flapRun(dir: string, cli: Cli, how: string, steps: number, periodMs: number): Promise<FlapRun> {
  const servers = await Promise.all([0, 1, 2].map(() => serveTextCraft({ port: 0 })));
  const proxies = servers.map((s) => faultProxy(s.url, () => "pass"));
  const killing = how.startsWith("killed");
  let flapper: TextCraftServer = servers[2], down = false, running = true, cycles = 0;
  const wait = (ms: number) => new Promise((r) => setTimeout(r, ms));
  if (!killing) proxies[2].set(() => (down ? "503" : "pass"));
  // Killing restarts the proxy's target; the proxy itself then fails to connect and answers 500: so the killed one
  // is reached directly, without its proxy (its requests are not counted).
  const urls = [proxies[0].url, proxies[1].url, killing ? flapper.url : proxies[2].url];
  const loop = (async () => {
    while (running) {
      await wait(periodMs);
      if (killing) await flapper.shutdown();
      down = true;
      await wait(periodMs);
      if (killing) flapper = await serveTextCraft({ port: servers[2].port });
      down = false;
      cycles++;
    }
  })();
  const run = `${dir}/flap-${killing ? "killed" : "503"}`;
  const t0 = performance.now();
  try {
    const r = await cli([
      "train",
      "textcraft",
      "--run-dir",
      run,
      ...urls.flatMap((u) => ["--env-url", u]),
      `model.tiny=${dir}/tiny.yaml`,
      "model.path=null",
      ...SMOKE_RUN,
      "sft.enabled=false",
      "actor.lr=0.01",
      `trainer.total_steps=${steps}`,
      "trainer.test_freq=0",
      ...(killing ? [] : ["env.retries=0"]),
    ]);
    const seconds = (performance.now() - t0) / 1000;
    running = false;
    await loop;
    const m = await lines(`${run}/metrics.jsonl`);
    const episodes = (await lines(`${run}/rollouts.jsonl`)).filter((e) => e.phase === "rl");
    const failed = episodes.filter((e) => e.finish === "env_failure");
    return {
      how,
      code: r.code,
      seconds,
      stepsCompleted: m.filter((l) => l.phase === "rl").length,
      abandoned: m.filter((l) => l.phase === "rl_abandoned").length,
      episodes: episodes.length,
      envFailures: failed.length,
      failedCreates: failed.filter((e) => /^POST \/create/.test(e.error ?? "")).length,
      cycles,
      served: {
        steady: [proxies[0].counts.pass, proxies[1].counts.pass],
        ...(killing ? {} : { flapping: proxies[2].counts.pass }),
        flapping503: proxies[2].counts["503"],
      },
    };
  } finally {
    running = false;
    await loop;
    for (const p of proxies) await p.shutdown();
    for (const s of [servers[0], servers[1], flapper]) await s.shutdown().catch(() => {});
  }
}
