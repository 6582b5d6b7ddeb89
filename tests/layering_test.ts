// The house's floors, checked on Deno's own module graph (`deno info --json`): data flows one way,
// cli -> cluster -> train/play/serve -> rollout/onnx -> model/tasks -> env/ops -> gpu -> util/config, and a few rooms
// are closed even to the floors above them. Every module of src/ and tasks/ must be reachable from an entry point, so no code sits unused.
import assert from "node:assert/strict";

const ROOT = new URL("../", import.meta.url).pathname;
// src/play/app.ts is the play page's script: `deno task play` bundles it for the browser rather than importing it.
const ENTRIES = ["mod.ts", "src/cli/main.ts", "src/cli/build.ts", "src/env/textcraft/facts_gen.ts", "src/play/app.ts"];

/** Floors by folder, highest first; a module may import its own folder and folders on lower floors. */
const FLOORS: [string, number][] = [
  ["src/cli/", 8],
  ["src/bench/", 7],
  ["src/command/", 6],
  ["src/cluster/", 6],
  ["src/pretrain/", 6],
  ["src/train/", 5],
  ["src/report/", 5],
  ["src/play/", 5],
  ["src/serve/", 5],
  ["src/rollout/", 4],
  ["src/onnx/", 4],
  ["src/model/", 3],
  ["src/rl/", 3],
  ["tasks/", 3],
  ["src/env/", 2],
  ["src/ops/", 2],
  ["src/gpu/", 1],
  ["src/util/", 0],
  ["src/config/", 0],
];

/** Rooms closed beyond the floors: [importer folder, imported folder, why]. */
const CLOSED: [string, string, string][] = [
  ["src/gpu/", "", "src/gpu imports nothing of ours"],
  ["src/env/", "src/gpu/", "the environment side never touches the GPU"],
  ["src/env/", "src/model/", "the environment side never touches the model"],
  ["src/train/", "src/env/textcraft/", "the trainer reaches a task's knowledge only through its hooks"],
  ["src/cluster/", "src/env/textcraft/", "the cluster reaches a task's knowledge only through its hooks"],
  ["src/rollout/", "src/env/textcraft/", "rollouts reach a task's knowledge only through its hooks"],
];

function floorOf(path: string): [string, number] | undefined {
  return FLOORS.find(([dir]) => path.startsWith(dir));
}

/** Our modules and the modules each imports (code and type imports alike). */
async function graph(): Promise<Map<string, Set<string>>> {
  const edges = new Map<string, Set<string>>();
  for (const entry of ENTRIES) {
    const out = await new Deno.Command(Deno.execPath(), {
      args: ["info", "--json", "--lock=tests/deno.lock", entry],
      cwd: ROOT,
      stdout: "piped",
    })
      .output();
    assert.equal(out.code, 0, `deno info ${entry}`);
    const info = JSON.parse(new TextDecoder().decode(out.stdout));
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
      const closed = CLOSED.find(([a, b]) => from.startsWith(a) && (b === "" || to.startsWith(b)));
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
    ["src/train/run.ts", new Set(["src/env/textcraft/tree.ts", "src/model/layer.ts"])],
  ]);
  assert.deepEqual(violations(edges), [
    "src/gpu/batch.ts -> src/util/random.ts (src/gpu imports nothing of ours)",
    "src/env/http.ts -> src/ops/matmul.ts (src/env/ may not import src/ops/)",
    "src/model/layer.ts -> src/train/nll.ts (src/model/ may not import src/train/)",
    "src/train/run.ts -> src/env/textcraft/tree.ts (the trainer reaches a task's knowledge only through its hooks)",
  ]);
});

Deno.test("every module of src/ and tasks/ is reachable from an entry point", async () => {
  const reached = new Set((await graph()).keys());
  const unused: string[] = [];
  for (const dir of ["src", "tasks"]) {
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
