/**
 * `deno task bench soak [--seconds S] [--concurrency N] [--sample-s S] [--json]`: a TextCraft server process driven
 * from loopback by N clients that each play episodes back to back (create, reset, a few steps valid and not, close)
 * for a set time, sampled every few seconds: the server's resident memory, open file descriptors and threads
 * (/proc, Linux), episodes and requests done, and request latency (p50, p99) in that interval. A server that leaks
 * shows a rising column; Crucible's must stay flat.
 */
import { Rng } from "../src/util/random.ts";
import { dryRun, numberFlag, parseFlags } from "../src/command/args.ts";
import { PROGRAM } from "./program.ts";

/** Usage text of the `soak` subcommand. */
export const SOAK_USAGE = `Usage: deno task bench soak [--seconds S] [--concurrency N] [--sample-s S] [--json]

Drives a TextCraft server process with N concurrent clients playing episodes for S seconds and samples, every
--sample-s seconds, its memory (RSS), open file descriptors, threads, episodes and requests done, and request latency
(p50, p99). Linux only (reads /proc).

Options:
  --seconds S       how long to drive the server (default 60; 1800 for the half-hour curve)
  --concurrency N   clients playing at once (default 64)
  --sample-s S      seconds between samples (default 5)
  --json            one JSON object

Examples:
  deno task bench soak --seconds 60
  deno task bench soak --seconds 1800 --concurrency 128 --sample-s 60 --json`;

/** One sample of the server. */
export interface SoakSample {
  atS: number;
  rssMiB: number;
  fds: number;
  threads: number;
  episodes: number;
  requests: number;
  errors: number;
  p50Ms: number;
  p99Ms: number;
}

const ACTIONS = [
  "inventory",
  "get 1 oak logs",
  "craft 4 oak planks using 1 oak logs",
  "fly to the moon",
  "get 2 stick",
];

function procStatus(pid: number): { rssMiB: number; threads: number } {
  const s = Deno.readTextFileSync(`/proc/${pid}/status`);
  return {
    rssMiB: Number(/VmRSS:\s+(\d+) kB/.exec(s)?.[1] ?? NaN) / 1024,
    threads: Number(/Threads:\s+(\d+)/.exec(s)?.[1] ?? NaN),
  };
}

function openFds(pid: number): number {
  let n = 0;
  for (const _ of Deno.readDirSync(`/proc/${pid}/fd`)) n++;
  return n;
}

function quantile(sorted: readonly number[], q: number): number {
  return sorted.length === 0 ? NaN : sorted[Math.min(sorted.length - 1, Math.floor(q * sorted.length))];
}

/** Runs the subcommand. */
export async function main(args: string[]): Promise<void> {
  const { values: v } = parseFlags("deno task bench soak", {
    args,
    options: {
      seconds: { type: "string" },
      concurrency: { type: "string" },
      "sample-s": { type: "string" },
      json: { type: "boolean", default: false },
      help: { type: "boolean", short: "h" },
    },
  });
  if (v.help) return console.log(SOAK_USAGE);
  const seconds = numberFlag("--seconds", v.seconds, 60, { lo: 1, hi: 86400 });
  const concurrency = numberFlag("--concurrency", v.concurrency, 64, { lo: 1, hi: 1024, integer: true });
  const every = numberFlag("--sample-s", v["sample-s"], 5, { lo: 0.5, hi: 3600 });
  const say = (s: string) => v.json ? console.error(s) : console.log(s);
  if (dryRun(`would soak the TextCraft server for ${seconds} s at ${concurrency} episodes`)) return;
  const child = new Deno.Command(Deno.execPath(), {
    args: ["run", "-A", PROGRAM, "serve", "textcraft", "--port", "0"],
    stdout: "piped",
    stderr: "null",
  }).spawn();
  const reader = child.stdout.pipeThrough(new TextDecoderStream()).getReader();
  let banner = "";
  while (!/listening on (\S+)/.test(banner)) {
    const { value, done } = await reader.read();
    if (done) throw new Error(`The server exited before listening: ${banner}`);
    banner += value;
  }
  const url = /listening on (\S+)/.exec(banner)![1];
  const samples: SoakSample[] = [];
  let latencies: number[] = [], episodes = 0, requests = 0, errors = 0;
  const end = performance.now() + seconds * 1000, t0 = performance.now();
  const headers = { "content-type": "application/json" };
  const call = async (path: string, body: unknown) => {
    const start = performance.now();
    try {
      const r = await fetch(`${url}${path}`, { method: "POST", headers, body: JSON.stringify(body) });
      const out = await r.json();
      if (r.status !== 200 || (out && typeof out === "object" && "error" in out && path === "/create")) errors++;
      return out;
    } catch {
      errors++;
      return undefined;
    } finally {
      requests++;
      latencies.push(performance.now() - start);
    }
  };
  const client = async (k: number) => {
    const rng = new Rng(k + 1);
    while (performance.now() < end) {
      const created = await call("/create", {});
      const id = created?.id;
      if (typeof id !== "number") continue;
      await call("/reset", { id, data_idx: rng.int(500) });
      for (let s = 0; s < 3 + rng.int(6); s++) await call("/step", { id, action: ACTIONS[rng.int(ACTIONS.length)] });
      await call("/close", { id });
      episodes++;
    }
  };
  const sample = () => {
    const sorted = latencies.sort((a, b) => a - b);
    const p = procStatus(child.pid);
    const s: SoakSample = {
      atS: (performance.now() - t0) / 1000,
      ...p,
      fds: openFds(child.pid),
      episodes,
      requests,
      errors,
      p50Ms: quantile(sorted, 0.5),
      p99Ms: quantile(sorted, 0.99),
    };
    latencies = [];
    samples.push(s);
    say(
      `${s.atS.toFixed(0).padStart(6)} s  RSS ${s.rssMiB.toFixed(1).padStart(7)} MiB  fds ${
        String(s.fds).padStart(4)
      }  ` +
        `threads ${String(s.threads).padStart(3)}  episodes ${String(s.episodes).padStart(7)}  requests ` +
        `${String(s.requests).padStart(8)}  errors ${s.errors}  p50 ${s.p50Ms.toFixed(2)} ms  p99 ${
          s.p99Ms.toFixed(2)
        } ms`,
    );
  };
  try {
    say(`soak: ${concurrency} clients against ${url} for ${seconds} s`);
    sample();
    const timer = setInterval(sample, every * 1000);
    await Promise.all(Array.from({ length: concurrency }, (_, k) => client(k)));
    clearInterval(timer);
    sample();
  } finally {
    child.kill("SIGTERM");
    await reader.cancel();
    await child.status;
  }
  const first = samples[1] ?? samples[0], last = samples[samples.length - 1];
  say(
    `RSS ${first.rssMiB.toFixed(1)} -> ${last.rssMiB.toFixed(1)} MiB, fds ${first.fds} -> ${last.fds}, threads ` +
      `${first.threads} -> ${last.threads} over ${last.episodes} episodes (${last.requests} requests, ${last.errors} ` +
      "errors)",
  );
  if (v.json) console.log(JSON.stringify({ seconds, concurrency, samples }));
}
