/**
 * The studio page's side of a run, without the page: the folders the server hands out loaded into the page's file
 * tree, a run of `runTraining` (the very function `deno task train` calls, playing the game in-process), the run
 * folder's logs read back for the charts and the episodes, and a checkpoint packed for download.
 */
import type { RunConfig } from "../config/schema.ts";
import { runTraining } from "../train/run.ts";
import type { Reporter, RunSummary } from "../train/types.ts";
import type { MemoryFiles } from "./memory_deno.ts";
import type { StudioSetup } from "./server.ts";
import { zipFolder } from "./zip.ts";

/** Loads every file of the setup's folders from the server into `files`, at the paths the server gives them. */
export async function loadMounts(
  setup: StudioSetup,
  files: MemoryFiles,
  onFile?: (loaded: number, total: number) => void,
): Promise<void> {
  const all = setup.mounts.flatMap((m) => m.files.map((f) => ({ path: `${m.path}/${f.name}`, size: f.size })));
  const total = all.reduce((n, f) => n + f.size, 0);
  let loaded = 0;
  for (const f of all) {
    const r = await fetch(`/files/${f.path.split("/").map(encodeURIComponent).join("/")}`);
    if (!r.ok) throw new Error(`${f.path} could not be fetched from the studio server (${r.status})`);
    files.put(f.path, new Uint8Array(await r.arrayBuffer()));
    loaded += f.size;
    onFile?.(loaded, total);
  }
}

/** Options of {@linkcode trainInPage}. */
export interface PageRunOptions {
  config: RunConfig;
  runDir: string;
  resume: boolean;
  reporter: Reporter;
  stopRequested: () => boolean;
}

/** Runs (or resumes) training in the page, as `deno task train` does, with the game played in-process. */
export async function trainInPage(o: PageRunOptions): Promise<RunSummary> {
  return await runTraining({ ...o, inProcessEnv: true });
}

/** The JSON lines of a run log file (metrics.jsonl, evals.jsonl, rollouts.jsonl); none when it does not exist. */
export function readLog(files: MemoryFiles, path: string): Record<string, unknown>[] {
  const bytes = files.get(path);
  if (!bytes) return [];
  return new TextDecoder().decode(bytes).split("\n").filter((l) => l.trim() !== "").map((l) => JSON.parse(l));
}

/** The folder of the checkpoint `latest` names in a run folder, or undefined before the first one. */
export function latestCheckpoint(files: MemoryFiles, runDir: string): string | undefined {
  const latest = files.get(`${runDir}/checkpoints/latest`);
  return latest ? `${runDir}/checkpoints/${new TextDecoder().decode(latest).trim()}` : undefined;
}

/**
 * A checkpoint folder as a ZIP that unpacks into a folder of `name`: the model folder `deno task eval --model` and
 * `deno task play --model` load (safetensors, config.json, tokenizer, crucible.json), with the optimizer's moments
 * and the trainer's state beside it.
 */
export function checkpointZip(files: MemoryFiles, dir: string, name: string): Uint8Array {
  const inside = files.files(dir);
  if (inside.size === 0) throw new RangeError(`${dir} holds no files to download`);
  return zipFolder(name, inside);
}
