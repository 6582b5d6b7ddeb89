/**
 * The half-working probes of `bench faults` (issue 32), each on the smoke run's budget: training runs behind a fault
 * proxy that answers a share of requests with garbage or HTTP 500s (steps completed, steps abandoned, exit code, wall
 * time), the warm start's demonstrations behind 20% 500s, a learning rate of 1e6 (exit code, what was saved, steps
 * rolled back), one step whose update is made to leave non-finite weights (rolled back, the run finishes), an
 * evaluation whose every episode overflows the prompt limit (what it reports), and 5,000 creates from one loopback
 * address (whether a second address still gets an environment).
 */
import http from "node:http";
import { serveTextCraft } from "../tasks/textcraft/game/server.ts";
import { faultProxy, flaky } from "./fault_proxy.ts";
import { smokeArgs } from "./smoke_run.ts";

/** One training probe's figures. */
export interface RunProbe {
  name: string;
  code: number;
  seconds: number;
  stepsCompleted: number;
  abandoned: number;
  /** Diverged steps rolled back (SFT and RL). */
  rolledBack: number;
  final: boolean;
  /** The last line of stderr (the stop's message), cut. */
  message: string;
}

/** The figures of the half-working probes. */
export interface FlakyReport {
  runs: RunProbe[];
  hog: { creates: number; refused: number; otherGotEnv: boolean; seconds: number };
}

type Cli = (args: string[], env?: Record<string, string>) => Promise<{ code: number; out: string; err: string }>;

/** The flaky probe's run: the smoke run's RL alone, three steps (tests/train/flaky_test.ts runs the same). */
export function flakyBudget(dir: string): string[] {
  return smokeArgs(`${dir}/tiny.yaml`, [
    "sft.enabled=false",
    "actor.lr=0.01",
    "trainer.total_steps=3",
    "trainer.test_freq=0",
  ]);
}

async function probe(
  cli: Cli,
  name: string,
  run: string,
  args: string[],
  env: Record<string, string> = {},
): Promise<RunProbe> {
  const t0 = performance.now();
  const r = await cli(["train", "textcraft", "--run-dir", run, ...args], env);
  const seconds = (performance.now() - t0) / 1000;
  const lines = (await Deno.readTextFile(`${run}/metrics.jsonl`).catch(() => "")).trim().split("\n")
    .filter((l) => l).map((l) => JSON.parse(l));
  const final = await Deno.stat(`${run}/checkpoints/final`).then(() => true, () => false);
  const message = r.err.trim().split("\n").filter((l) => !l.startsWith("[")).pop() ?? "";
  return {
    name,
    code: r.code,
    seconds,
    stepsCompleted: lines.filter((m) => m.phase === "rl").length,
    abandoned: lines.filter((m) => m.phase === "rl_abandoned").length,
    rolledBack: lines.filter((m) => String(m.phase).endsWith("_rollback")).length,
    final,
    message: message.slice(0, 300),
  };
}

/** Runs the probes; `say` gets one line per probe. */
export async function flakyProbes(dir: string, cli: Cli, say: (s: string) => void): Promise<FlakyReport> {
  const server = await serveTextCraft({ port: 0 });
  const runs: RunProbe[] = [];
  const show = (p: RunProbe) => {
    runs.push(p);
    say(
      `  ${p.name}: exit ${p.code} in ${p.seconds.toFixed(0)} s; ${p.stepsCompleted} steps completed, ${p.abandoned} ` +
        `abandoned, ${p.rolledBack} rolled back; final ${p.final ? "saved" : "not saved"}${
          p.message ? `; "${p.message.slice(0, 160)}"` : ""
        }`,
    );
  };
  try {
    const flakies: [string, ReturnType<typeof flaky>, string[]][] = [
      ["20% garbage", flaky("garbage", 0.2, [], 11), []],
      ["20% HTTP 500, env.retries=0", flaky("500", 0.2, [], 12), ["env.retries=0"]],
      ["3% HTTP 500, env.retries=0", flaky("500", 0.03, [], 13), ["env.retries=0"]],
    ];
    for (const [name, rule, extra] of flakies) {
      const proxy = faultProxy(server.url, () => "pass");
      try {
        const run = `${dir}/flaky-${runs.length}`;
        // The run's check at start (a create and a close) passes; the faults begin with the first episode.
        let seen = 0;
        proxy.set((route) => (seen++ < 2 ? "pass" : rule(route)));
        show(await probe(cli, name, run, ["--env-url", proxy.url, ...flakyBudget(dir), ...extra]));
      } finally {
        await proxy.shutdown();
      }
    }
    const demos = faultProxy(server.url, flaky("500", 0.2, [], 14));
    try {
      show(
        await probe(cli, "warm start, 20% HTTP 500", `${dir}/demos`, [
          "--env-url",
          demos.url,
          ...flakyBudget(dir),
          "sft.enabled=true",
          "sft.epochs=0.03",
          "sft.batch_tokens=1024",
          "trainer.total_steps=1",
          "trainer.test_freq=0",
        ]),
      );
    } finally {
      await demos.shutdown();
    }
    show(
      await probe(cli, "actor.lr=1e6", `${dir}/lr`, [...flakyBudget(dir), "actor.lr=1e6", "actor.entropy_coeff=0.1"]),
    );
    show(
      await probe(
        cli,
        "RL step 2's weights made non-finite",
        `${dir}/nan`,
        [...flakyBudget(dir), "actor.entropy_coeff=0.1"],
        { CRUCIBLE_DIVERGE_AT: "rl update 2" },
      ),
    );
    show(
      await probe(cli, "every episode overflows", `${dir}/overflow`, [
        ...flakyBudget(dir),
        "trainer.total_steps=1",
        "rollout.max_prompt_length=100",
      ]),
    );
  } finally {
    await server.shutdown();
  }
  const hog = await hogProbe(5000);
  say(
    `  5,000 creates from 127.0.0.1: ${hog.creates - hog.refused} created, ${hog.refused} refused in ` +
      `${hog.seconds.toFixed(1)} s; 127.0.0.2 then gets an environment: ${hog.otherGotEnv}`,
  );
  return { runs, hog };
}

/** POST /create from a chosen loopback source address (node's `localAddress`; fetch cannot pick one). */
function createFrom(port: number, localAddress: string): Promise<{ id?: number; error?: string }> {
  return new Promise((resolve, reject) => {
    const req = http.request({
      host: "127.0.0.1",
      port,
      path: "/create",
      method: "POST",
      localAddress,
      headers: { "content-type": "application/json", "content-length": "2" },
    }, (res) => {
      let body = "";
      res.on("data", (c) => (body += c));
      res.on("end", () => resolve(JSON.parse(body)));
    });
    req.on("error", reject);
    req.end("{}");
  });
}

async function hogProbe(n: number): Promise<FlakyReport["hog"]> {
  const server = await serveTextCraft({ port: 0 });
  const t0 = performance.now();
  let refused = 0;
  try {
    for (let i = 0; i < n; i += 50) {
      const got = await Promise.all(
        Array.from({ length: Math.min(50, n - i) }, () => createFrom(server.port, "127.0.0.1")),
      );
      refused += got.filter((g) => g.error !== undefined).length;
    }
    const seconds = (performance.now() - t0) / 1000;
    const other = await createFrom(server.port, "127.0.0.2");
    return { creates: n, refused, otherGotEnv: Number.isSafeInteger(other.id), seconds };
  } finally {
    await server.shutdown();
  }
}
