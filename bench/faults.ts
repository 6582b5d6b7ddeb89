/**
 * `deno task bench faults [--kills N] [--requests N] [--outage-s S] [--only LIST] [--json]`: the larger versions of
 * the fault tests, with figures. (1) Kills: a short training run killed outright (SIGKILL) N times, at named fault points and
 * at random moments, each resumed to the end and compared with an uninterrupted run's final weights. (2) Hostile
 * requests: N malformed, oversized, cross-origin, wrong-type and stale-id requests against a TextCraft server
 * process, its memory before and after, and a correct episode played afterwards. (3) An outage of S seconds in
 * front of a training run, which must wait it out and end with the same weights as a run without it. (4) The
 * half-working probes of `faults_flaky.ts`: flaky servers, a diverging learning rate, an all-overflow evaluation and
 * one client's 5,000 creates. (5) A run against three servers while one flaps (`faults_flap.ts`).
 */
import { Rng } from "../src/util/random.ts";
import { dryRun, numberFlag, parseFlags } from "../src/command/args.ts";
import { flakyProbes, type FlakyReport } from "./faults_flaky.ts";
import { flapProbes, type FlapRun } from "./faults_flap.ts";
import { SMOKE_MODEL_YAML, smokeArgs } from "./smoke_run.ts";
import { PROGRAM } from "./program.ts";

const SECTIONS = ["kills", "requests", "outage", "flaky", "flap"] as const;

/** Usage text of the `faults` subcommand. */
export const FAULTS_USAGE =
  `Usage: deno task bench faults [--kills N] [--requests N] [--outage-s S] [--only LIST] [--json]

Fault tolerance in figures: kills resumed bit for bit, hostile requests survived with memory measured, an outage
waited out, and the half-working world: flaky servers (20% garbage, 20% HTTP 500s, 3% HTTP 500s: steps completed,
abandoned, exit code, wall time), the warm start behind 20% 500s, actor.lr=1e6, an evaluation whose every episode
overflows, 5,000 creates from one address; and a run against three servers while the third flaps (killed and
restarted, or answering 503, every 1.5 s). Takes a few minutes per dozen kills on a CPU rasteriser.

Options:
  --kills N        kill-and-resume rounds, half at named fault points and half at random moments (default 24)
  --requests N     hostile requests against a TextCraft server process (default 10000)
  --outage-s S     seconds the environment stays down in the outage run (default 60)
  --only LIST      comma-separated sections to run, of ${SECTIONS.join(", ")} (default all)
  --json           one JSON object

Examples:
  deno task bench faults
  deno task bench faults --kills 6 --requests 2000 --outage-s 20 --json
  deno task bench faults --only flaky`;

/**
 * The kill probes' run: the smoke run with a warm start and the KL term, four steps (tests/train/faults_test.ts runs
 * it shorter: `changed` comes last).
 */
export function faultsBudget(dir: string, changed: readonly string[] = []): string[] {
  return smokeArgs(`${dir}/tiny.yaml`, [
    "actor.lr=0.01",
    "actor.use_kl_loss=true",
    "sft.epochs=0.06",
    "sft.batch_tokens=1024",
    "sft.lr=0.01",
    "trainer.total_steps=4",
    "trainer.test_freq=0",
    ...changed,
  ]);
}

/** The figures of a run (the JSON object). */
export interface FaultsReport {
  kills?: { rounds: number; identical: number; debris: number; duplicatedLines: number; moments: string[] };
  requests?: {
    sent: number;
    statuses: Record<string, number>;
    failures: number;
    rssBeforeMiB: number;
    rssAfterMiB: number;
    playsAfter: boolean;
  };
  outage?: { seconds: number; completed: boolean; identical: boolean; waitedLines: number };
  flaky?: FlakyReport;
  flap?: FlapRun[];
}

async function cli(args: string[], env: Record<string, string> = {}) {
  const r = await new Deno.Command(Deno.execPath(), {
    args: ["run", "-A", PROGRAM, ...args],
    env,
    stdout: "piped",
    stderr: "piped",
  }).output();
  const d = new TextDecoder();
  return { code: r.code, signal: r.signal, out: d.decode(r.stdout), err: d.decode(r.stderr) };
}

async function sha(path: string): Promise<string> {
  const digest = await crypto.subtle.digest("SHA-256", await Deno.readFile(path));
  return [...new Uint8Array(digest)].map((b) => b.toString(16).padStart(2, "0")).join("");
}

/** Runs the subcommand. */
export async function main(args: string[]): Promise<void> {
  const { values: v } = parseFlags("deno task bench faults", {
    args,
    options: {
      kills: { type: "string" },
      requests: { type: "string" },
      "outage-s": { type: "string" },
      only: { type: "string" },
      json: { type: "boolean", default: false },
      help: { type: "boolean", short: "h" },
    },
  });
  if (v.help) return console.log(FAULTS_USAGE);
  const kills = numberFlag("--kills", v.kills, 24, { lo: 1, hi: 1000, integer: true });
  const requests = numberFlag("--requests", v.requests, 10000, { lo: 1, hi: 1_000_000, integer: true });
  const outage = numberFlag("--outage-s", v["outage-s"], 60, { lo: 1, hi: 3600 });
  const say = (s: string) => v.json ? console.error(s) : console.log(s);
  if (dryRun(`would run ${kills} kills, ${requests} requests and a ${outage} s outage`)) return;
  const dir = await Deno.makeTempDir({ prefix: "crucible-faults-" });
  await Deno.writeTextFile(`${dir}/tiny.yaml`, SMOKE_MODEL_YAML);
  const only = (v.only ?? SECTIONS.join(",")).split(",").map((x) => x.trim());
  const unknown = only.filter((x) => !(SECTIONS as readonly string[]).includes(x));
  if (unknown.length > 0) throw new RangeError(`--only takes ${SECTIONS.join(", ")}; got "${unknown.join(", ")}"`);
  const report: FaultsReport = {};
  if (only.includes("kills")) report.kills = await killRounds(dir, kills, say);
  if (only.includes("requests")) report.requests = await hostile(requests, say);
  if (only.includes("outage")) report.outage = await outageRun(dir, outage, say);
  if (only.includes("flaky")) {
    say("half-working:");
    report.flaky = await flakyProbes(dir, cli, say);
  }
  if (only.includes("flap")) {
    say("three servers, one flapping:");
    report.flap = await flapProbes(dir, cli, say);
  }
  if (v.json) console.log(JSON.stringify(report));
}

async function killRounds(dir: string, n: number, say: (s: string) => void): Promise<FaultsReport["kills"]> {
  const straight = await cli(["train", "textcraft", "--run-dir", `${dir}/straight`, ...faultsBudget(dir)]);
  if (straight.code !== 0) throw new Error(`The uninterrupted run failed: ${straight.err.slice(-400)}`);
  const want = await sha(`${dir}/straight/checkpoints/final/model.safetensors`);
  const names = Deno.readTextFileSync(`${dir}/straight/metrics.jsonl`).trim().split("\n").map((l) => JSON.parse(l));
  const sft = names.filter((m) => m.phase === "sft").length, rl = names.filter((m) => m.phase === "rl").length;
  const points = [
    ...Array.from({ length: sft }, (_, k) => `sft step ${k + 1}`),
    ...Array.from({ length: rl }, (_, k) => [`rl rollout ${k + 1}`, `rl update ${k + 1}`]).flat(),
    ...["written", "saved", "pointed"].flatMap((s) => [`${s} sft-final`, `${s} rl-step-000002`, `${s} final`]),
  ];
  const rng = new Rng(2026);
  const out = { rounds: 0, identical: 0, debris: 0, duplicatedLines: 0, moments: [] as string[] };
  for (let k = 0; k < n; k++) {
    const run = `${dir}/kill-${k}`;
    let moment: string;
    if (k % 2 === 0) {
      moment = points[rng.int(points.length)];
      await cli(["train", "textcraft", "--run-dir", run, ...faultsBudget(dir)], { CRUCIBLE_KILL_AT: moment });
    } else {
      const ms = 1500 + rng.int(12000);
      moment = `after ${ms} ms`;
      const child = new Deno.Command(Deno.execPath(), {
        args: ["run", "-A", PROGRAM, "train", "textcraft", "--run-dir", run, ...faultsBudget(dir)],
        stdout: "null",
        stderr: "null",
      }).spawn();
      const timer = setTimeout(() => child.kill("SIGKILL"), ms);
      await child.status;
      clearTimeout(timer);
    }
    // A kill before the run wrote its config leaves nothing to resume: that run starts again from scratch.
    const started = await Deno.stat(`${run}/config.yaml`).then(() => true, () => false);
    const r = started
      ? await cli(["train", "--resume", run])
      : await cli(["train", "textcraft", "--run-dir", run, ...faultsBudget(dir)]);
    out.rounds++;
    out.moments.push(moment);
    if (r.code !== 0) {
      say(`  kill ${k + 1} (${moment}): the resume failed: ${r.err.trim().split("\n").pop()}`);
      continue;
    }
    const same = await sha(`${run}/checkpoints/final/model.safetensors`) === want;
    out.identical += same ? 1 : 0;
    for await (const e of Deno.readDir(`${run}/checkpoints`)) if (/\.(tmp|old)-/.test(e.name)) out.debris++;
    const keys = Deno.readTextFileSync(`${run}/metrics.jsonl`).trim().split("\n").map((l) => {
      const m = JSON.parse(l);
      return `${m.phase} ${m.step}`;
    });
    out.duplicatedLines += keys.length - new Set(keys).size;
    say(`  kill ${k + 1} (${moment}): resumed, final weights ${same ? "identical" : "DIFFERENT"}`);
  }
  say(
    `kills: ${out.identical} of ${out.rounds} resumed bit for bit; ${out.debris} debris, ${out.duplicatedLines} ` +
      "repeated metrics lines",
  );
  return out;
}

function rssMiB(pid: number): number {
  const status = Deno.readTextFileSync(`/proc/${pid}/status`);
  return Number(/VmRSS:\s+(\d+) kB/.exec(status)?.[1] ?? 0) / 1024;
}

async function hostile(n: number, say: (s: string) => void): Promise<FaultsReport["requests"]> {
  const port = 36100 + new Rng(Date.now()).int(800);
  const server = new Deno.Command(Deno.execPath(), {
    args: ["run", "-A", PROGRAM, "serve", "textcraft", "--port", String(port)],
    stdout: "null",
    stderr: "null",
  }).spawn();
  const url = `http://127.0.0.1:${port}`;
  for (let i = 0; i < 100; i++) {
    if (await fetch(url).then((r) => r.text(), () => null) !== null) break;
    await new Promise((r) => setTimeout(r, 100));
  }
  const before = rssMiB(server.pid);
  const rng = new Rng(7);
  const statuses: Record<string, number> = {};
  let failures = 0;
  const json = { "content-type": "application/json" };
  const bodies = [
    () => "{",
    () => JSON.stringify({ id: rng.int(1 << 30) }),
    () => JSON.stringify({ id: "x", action: 3 }),
    () => JSON.stringify({ id: -1, data_idx: 1e300 }),
    () => "x".repeat(70_000),
    () => JSON.stringify({ id: 1, action: "craft ".repeat(5000) }),
    () => JSON.stringify([1, 2, 3]),
    () => "\u0000\u0001",
  ];
  const routes = ["/create", "/reset", "/step", "/observation", "/detail", "/close", "/nope", "/goal"];
  for (let i = 0; i < n; i += 16) {
    await Promise.all(Array.from({ length: Math.min(16, n - i) }, async () => {
      const route = routes[rng.int(routes.length)];
      const kind = rng.int(4);
      const headers: Record<string, string> = kind === 0 ? { "content-type": "text/plain" } : { ...json };
      if (kind === 1) headers.origin = "http://evil.example";
      try {
        const r = route === "/observation" || route === "/detail"
          ? await fetch(`${url}${route}?id=${rng.int(1000)}`, { headers })
          : await fetch(`${url}${route}`, { method: "POST", headers, body: bodies[rng.int(bodies.length)]() });
        await r.arrayBuffer();
        statuses[r.status] = (statuses[r.status] ?? 0) + 1;
      } catch {
        failures++;
      }
    }));
  }
  const after = rssMiB(server.pid);
  // Afterwards a well-behaved client still plays a task to the end.
  const created = await (await fetch(`${url}/create`, { method: "POST", headers: json, body: "{}" })).json();
  await fetch(`${url}/reset`, { method: "POST", headers: json, body: JSON.stringify({ id: created.id, data_idx: 0 }) });
  const steps = ["get 1 acacia logs", "craft 4 acacia planks using 1 acacia logs"];
  let done = false;
  for (const action of steps) {
    const r = await fetch(`${url}/step`, {
      method: "POST",
      headers: json,
      body: JSON.stringify({ id: created.id, action }),
    });
    done = (await r.json()).done === true;
  }
  server.kill("SIGTERM");
  await server.status;
  say(
    `requests: ${n} hostile, statuses ${JSON.stringify(statuses)}, ${failures} connection failures; server RSS ` +
      `${before.toFixed(1)} MiB before, ${after.toFixed(1)} MiB after; a task played to the end afterwards: ${done}`,
  );
  return { sent: n, statuses, failures, rssBeforeMiB: before, rssAfterMiB: after, playsAfter: done };
}

async function outageRun(dir: string, seconds: number, say: (s: string) => void): Promise<FaultsReport["outage"]> {
  const port = 36900 + new Rng(Date.now() + 1).int(90);
  const server = new Deno.Command(Deno.execPath(), {
    args: ["run", "-A", PROGRAM, "serve", "textcraft", "--port", String(port)],
    stdout: "null",
    stderr: "null",
  }).spawn();
  let down = false;
  const proxy = Deno.serve({ port: 0, hostname: "127.0.0.1", onListen() {} }, async (req) => {
    if (down) return new Response("Service Unavailable", { status: 503 });
    const u = new URL(req.url);
    const body = req.method === "POST" ? await req.text() : undefined;
    const r = await fetch(`http://127.0.0.1:${port}${u.pathname}${u.search}`, {
      method: req.method,
      headers: req.headers,
      body,
    })
      .catch(() => new Response("Bad Gateway", { status: 502 }));
    return new Response(await r.arrayBuffer(), { status: r.status, headers: r.headers });
  });
  const envUrl = `http://127.0.0.1:${proxy.addr.port}`;
  const args = (run: string) => ["train", "textcraft", "--run-dir", run, "--env-url", envUrl, ...faultsBudget(dir)];
  try {
    for (let i = 0; i < 100; i++) {
      if (await fetch(`http://127.0.0.1:${port}`).then(() => true, () => false)) break;
      await new Promise((r) => setTimeout(r, 100));
    }
    const straight = await cli([...args(`${dir}/outage-straight`), "env.retries=1"]);
    if (straight.code !== 0) throw new Error(`The run without an outage failed: ${straight.err.slice(-400)}`);
    const watch = (async () => {
      for (;;) {
        await new Promise((r) => setTimeout(r, 100));
        const evals = await Deno.readTextFile(`${dir}/outage/evals.jsonl`).catch(() => "");
        if (evals.includes('"phase":"sft"')) break;
      }
      down = true;
      await new Promise((r) => setTimeout(r, seconds * 1000));
      down = false;
    })();
    const r = await cli([...args(`${dir}/outage`), "env.retries=1"]);
    await watch;
    const completed = r.code === 0;
    const identical = completed &&
      await sha(`${dir}/outage/checkpoints/final/model.safetensors`) ===
        await sha(`${dir}/outage-straight/checkpoints/final/model.safetensors`);
    const waitedLines = r.out.split("\n").filter((l) => /not counted/.test(l)).length;
    say(`outage: ${seconds} s down; run completed ${completed}, final weights identical ${identical}`);
    return { seconds, completed, identical, waitedLines };
  } finally {
    await proxy.shutdown();
    server.kill("SIGTERM");
    await server.status;
  }
}
