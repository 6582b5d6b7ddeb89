// The house's floors, checked on Deno's own module graph (`deno info --json`): data flows one way,
// cli/bench -> cluster/pretrain/command/studio -> train/report/play/serve -> update -> the task registry ->
// rollout/onnx/tasks -> config -> model/rl/task -> env/ops -> gpu -> util, and a few rooms are closed even to the
// floors above them. Tasks are plug-ins on top of src/: a task (tasks/<name>/) imports src/'s Task interface
// (src/task/), its environment (src/env/) and utilities, never the model or the GPU; src/ below the entry floor
// reaches the tasks only through their registry, tasks/mod.ts, and the Task hooks; only the entry floor (src/cli,
// bench/, mod.ts, the play and studio pages' scripts) names a task's own modules. The benchmarks (bench/) are tools
// beside the product: nothing the program or the library runs reaches them. Every module of src/, tasks/ and bench/
// must be reachable from an entry point, so no code sits unused.
import assert from "node:assert/strict";
import { runDeno } from "./subprocess.ts";

const ROOT = new URL("../", import.meta.url).pathname;
// src/play/app.ts is the play page's script: `deno task play` bundles it for the browser rather than importing it;
// src/studio/app.ts likewise the studio page's (`deno task studio`), whose import map (src/studio/import_map.json)
// puts src/studio/node_crypto.ts and node_http.ts in place of two Node built-ins.
// tasks/textcraft/game/facts_gen.ts rebuilds TextCraft's recipes.tsv (`deno run -A` on it).
const ENTRIES = [
  "mod.ts",
  "src/cli/main.ts",
  "src/cli/build.ts",
  "tasks/textcraft/game/facts_gen.ts",
  "src/play/app.ts",
  "src/studio/app.ts",
  "src/studio/node_crypto.ts",
  "src/studio/node_http.ts",
  "bench/main.ts",
];

/** The product's entry points: what `deno task ...` (but bench), the bundle and the library run. */
const PRODUCT = ENTRIES.filter((e) => !e.startsWith("bench/"));

/**
 * Floors by folder (or module), highest first; a module may import its own folder and folders on lower floors. The
 * first prefix that matches decides, so a module named here stands apart from its folder.
 */
const FLOORS: [string, number][] = [
  ["src/cli/", 11],
  // The play page's browser script: an entry of its own (bundled, never imported), so on the entry floor.
  ["src/play/app.ts", 11],
  // The studio page's script likewise, and the stand-ins its bundle takes for node:crypto and node:http.
  ["src/studio/app.ts", 11],
  ["src/studio/node_crypto.ts", 11],
  ["src/studio/node_http.ts", 11],
  // The benchmarks' own entry floor, beside the program's: neither imports the other.
  ["bench/", 11],
  ["src/cluster/", 9],
  ["src/pretrain/", 9],
  ["src/command/", 9],
  // The studio: its server, the page's run in the browser (the page's Deno, settings, evaluation, download).
  ["src/studio/", 9],
  ["src/train/", 8],
  ["src/report/", 8],
  ["src/play/", 8],
  ["src/serve/", 8],
  // The learner and its updates on the GPU: what a run's phases drive, below the run itself.
  ["src/update/", 7],
  // The task registry: the one door from src/ into tasks/ below the entry floor.
  ["tasks/mod.ts", 6],
  ["src/rollout/", 5],
  ["src/onnx/", 5],
  ["tasks/", 5],
  // The run config composes the settings of the rooms below it: the RL algorithms it names are those src/rl
  // registers, the KV cache's element types the model's.
  ["src/config/", 4],
  ["src/model/", 3],
  ["src/rl/", 3],
  ["src/task/", 3],
  ["src/env/", 2],
  ["src/ops/", 2],
  ["src/gpu/", 1],
  ["src/util/", 0],
];

const REGISTRY_ONLY =
  "below the entry floor, src/ reaches a task only through the registry (tasks/mod.ts) and its hooks";
const NO_MODEL = "a task knows its environment and the Task interface, never the model, the GPU or the trainer";

/** Rooms closed beyond the floors: [importer floor, imported folder, why, the one module of it left open]. */
const CLOSED: [string, string, string, string?][] = [
  ["src/gpu/", "", "src/gpu imports nothing of ours"],
  ["src/env/", "src/gpu/", "the environment side never touches the GPU"],
  ["src/env/", "src/model/", "the environment side never touches the model"],
  ["src/rl/", "src/gpu/", "the RL math runs on plain arrays, with no GPU"],
  ["src/rl/", "src/model/", "the RL math runs on plain arrays, with no model"],
  ...["src/model/", "src/ops/", "src/gpu/", "src/rl/"].map((to): [string, string, string] => ["tasks/", to, NO_MODEL]),
  ...[
    "src/train/",
    "src/update/",
    "src/pretrain/",
    "src/report/",
    "src/cluster/",
    "src/serve/",
    "src/play/",
    "src/command/",
    "src/studio/",
  ].map(
    (from): [string, string, string, string] => [from, "tasks/", REGISTRY_ONLY, "tasks/mod.ts"],
  ),
];

function floorOf(path: string): [string, number] | undefined {
  return FLOORS.find(([dir]) => path.startsWith(dir));
}

/** Our modules reached from `entries` and the modules each imports (code and type imports alike). */
async function graph(entries: readonly string[] = ENTRIES): Promise<Map<string, Set<string>>> {
  const edges = new Map<string, Set<string>>();
  for (const entry of entries) {
    const out = await runDeno(["info", "--json", "--lock=tests/deno.lock", entry]);
    assert.equal(out.code, 0, `deno info ${entry}`);
    const info = JSON.parse(out.out);
    for (const m of info.modules) {
      if (!m.specifier.startsWith(`file://${ROOT}`)) continue;
      const from = m.specifier.slice(`file://${ROOT}`.length);
      const deps = edges.get(from) ?? new Set<string>();
      for (const d of m.dependencies ?? []) {
        for (const target of [d.code?.specifier, d.type?.specifier]) {
          if (target?.startsWith(`file://${ROOT}`)) deps.add(target.slice(`file://${ROOT}`.length));
        }
      }
      edges.set(from, deps);
    }
  }
  return edges;
}

/** Every import that breaks the floors or a closed room, as "importer -> imported (rule)". */
export function violations(edges: ReadonlyMap<string, ReadonlySet<string>>): string[] {
  const out: string[] = [];
  for (const [from, deps] of edges) {
    const own = floorOf(from);
    for (const to of deps) {
      if (!to.endsWith(".ts")) continue; // shaders, configs and data are assets
      const theirs = floorOf(to);
      if (!own || !theirs || own[0] === theirs[0]) {
        if (own && theirs) continue;
        if (own && !theirs && to !== "mod.ts") continue;
        if (own) out.push(`${from} -> ${to} (nothing of ours imports the public face)`);
        continue;
      }
      const closed = CLOSED.find(([a, b, , open]) => own[0] === a && (b === "" || to.startsWith(b)) && to !== open);
      if (closed && !(closed[1] === "" && to.startsWith(own[0]))) out.push(`${from} -> ${to} (${closed[2]})`);
      else if (own[1] <= theirs[1]) out.push(`${from} -> ${to} (${own[0]} may not import ${theirs[0]})`);
    }
  }
  return out;
}

Deno.test("no module imports upward, sideways across a floor, or into a closed room", async () => {
  const found = violations(await graph());
  assert.deepEqual(found, [], `layering violations:\n${found.join("\n")}`);
});

Deno.test("the layering check itself catches an upward import, a sideways one and a closed room", () => {
  const edges = new Map([
    ["src/gpu/batch.ts", new Set(["src/util/random.ts"])],
    ["src/env/http.ts", new Set(["src/ops/matmul.ts"])],
    ["src/model/layer.ts", new Set(["src/train/nll.ts"])],
    ["src/train/run.ts", new Set(["tasks/textcraft/game/tree.ts", "tasks/mod.ts", "src/model/layer.ts"])],
    ["src/rollout/agent.ts", new Set(["tasks/mod.ts", "src/task/task.ts"])],
    ["tasks/textcraft/oracle.ts", new Set(["src/model/tokenizer.ts", "src/env/client.ts", "tasks/mod.ts"])],
    ["src/rl/advantages.ts", new Set(["src/gpu/tensor.ts"])],
    ["src/cli/play.ts", new Set(["tasks/textcraft/game/server.ts", "bench/train.ts"])],
    ["src/cluster/worker.ts", new Set(["src/pretrain/run.ts"])],
  ]);
  assert.deepEqual(violations(edges), [
    "src/gpu/batch.ts -> src/util/random.ts (src/gpu imports nothing of ours)",
    "src/env/http.ts -> src/ops/matmul.ts (src/env/ may not import src/ops/)",
    "src/model/layer.ts -> src/train/nll.ts (src/model/ may not import src/train/)",
    `src/train/run.ts -> tasks/textcraft/game/tree.ts (${REGISTRY_ONLY})`,
    "src/rollout/agent.ts -> tasks/mod.ts (src/rollout/ may not import tasks/mod.ts)",
    `tasks/textcraft/oracle.ts -> src/model/tokenizer.ts (${NO_MODEL})`,
    "tasks/textcraft/oracle.ts -> tasks/mod.ts (tasks/ may not import tasks/mod.ts)",
    "src/rl/advantages.ts -> src/gpu/tensor.ts (the RL math runs on plain arrays, with no GPU)",
    "src/cli/play.ts -> bench/train.ts (src/cli/ may not import bench/)",
    "src/cluster/worker.ts -> src/pretrain/run.ts (src/cluster/ may not import src/pretrain/)",
  ]);
});

Deno.test("nothing the program or the library runs reaches the benchmarks (bench/)", async () => {
  const reached = [...(await graph(PRODUCT)).keys()];
  assert.ok(reached.includes("src/train/run.ts"), "the product's graph was read");
  assert.deepEqual(reached.filter((m) => m.startsWith("bench/")), []);
});

Deno.test("every module of src/, tasks/ and bench/ is reachable from an entry point", async () => {
  const reached = new Set((await graph()).keys());
  const unused: string[] = [];
  for (const dir of ["src", "tasks", "bench"]) {
    const walk = async (d: string) => {
      for await (const e of Deno.readDir(`${ROOT}${d}`)) {
        const p = `${d}/${e.name}`;
        if (e.isDirectory) await walk(p);
        else if (p.endsWith(".ts") && !reached.has(p)) unused.push(p);
      }
    };
    await walk(dir);
  }
  assert.deepEqual(unused.sort(), [], "modules nothing imports");
});

/**
 * The import circles among the modules `inside` accepts (code and type imports alike): the strongly connected
 * components of more than one module, each sorted, by Tarjan's algorithm.
 */
export function circles(edges: ReadonlyMap<string, ReadonlySet<string>>, inside: (m: string) => boolean): string[][] {
  let next = 0;
  const index = new Map<string, number>(),
    low = new Map<string, number>(),
    stack: string[] = [],
    on = new Set<string>();
  const out: string[][] = [];
  const visit = (v: string) => {
    index.set(v, next);
    low.set(v, next++);
    stack.push(v);
    on.add(v);
    for (const w of edges.get(v) ?? []) {
      if (!inside(w)) continue;
      if (!index.has(w)) {
        visit(w);
        low.set(v, Math.min(low.get(v)!, low.get(w)!));
      } else if (on.has(w)) low.set(v, Math.min(low.get(v)!, index.get(w)!));
    }
    if (low.get(v) !== index.get(v)) return;
    const part: string[] = [];
    for (let w = ""; w !== v;) {
      w = stack.pop()!;
      on.delete(w);
      part.push(w);
    }
    if (part.length > 1) out.push(part.sort());
  };
  for (const v of edges.keys()) if (inside(v) && !index.has(v)) visit(v);
  return out;
}

/** The rooms checked for circles by the self-test below: the run, its update and the RL math it registers. */
const RUN_ROOMS = (m: string) => ["src/train/", "src/update/", "src/rl/"].some((room) => m.startsWith(room));

Deno.test("no module of ours reaches itself through its imports, type imports included", async () => {
  // Once src/gpu/batch.ts and timing.ts, and src/model/layer.ts, lora.ts and transformer.ts, did (through types).
  const edges = await graph();
  assert.ok([...edges.keys()].filter(RUN_ROOMS).length > 20, "the run's modules were read");
  assert.ok(edges.has("src/gpu/batch.ts") && edges.has("src/model/lora.ts"), "the GPU's and the model's were read");
  assert.deepEqual(circles(edges, () => true), []);
});

Deno.test("the circle check finds a circle through types and ignores one outside the rooms it checks", () => {
  const edges = new Map([
    ["src/train/run.ts", new Set(["src/train/phases.ts", "src/train/types.ts"])],
    ["src/train/phases.ts", new Set(["src/train/types.ts", "src/update/critic.ts"])],
    ["src/update/critic.ts", new Set(["src/train/run.ts"])],
    ["src/train/types.ts", new Set(["src/model/a.ts"])],
    ["src/model/a.ts", new Set(["src/model/b.ts"])],
    ["src/model/b.ts", new Set(["src/model/a.ts"])],
  ]);
  assert.deepEqual(circles(edges, RUN_ROOMS), [["src/train/phases.ts", "src/train/run.ts", "src/update/critic.ts"]]);
  assert.deepEqual(circles(edges, () => true).length, 2);
});

Deno.test("every folder of src/ is a room on a floor, and docs/architecture.md's map of the code names exactly the rooms", async () => {
  const rooms = FLOORS.map(([dir]) => dir).filter((d) => d.endsWith("/") || d === "tasks/mod.ts");
  const folders: string[] = [];
  for await (const e of Deno.readDir(`${ROOT}src`)) if (e.isDirectory) folders.push(`src/${e.name}/`);
  // A folder with no floor would be checked by nothing.
  assert.deepEqual(folders.filter((d) => !rooms.includes(d)), [], "folders of src/ with no floor");
  const page = await Deno.readTextFile(`${ROOT}docs/architecture.md`);
  const map = page.slice(page.indexOf("### Map of the code"));
  const table = map.slice(0, map.indexOf("\n\n", map.indexOf("\n| ")));
  const named = [...table.matchAll(/^\| `([^`]+)`/gm)].map((m) => m[1]).filter((n) => n !== "mod.ts");
  assert.deepEqual(named.toSorted(), rooms.toSorted(), "docs/architecture.md's map of the code against the floors");
});
