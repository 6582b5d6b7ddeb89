/**
 * TensorBoard export: a run folder's logged scalars as one TensorBoard event file, so runs can be compared where
 * people already compare them (`tensorboard --logdir DIR`). Every number of metrics.jsonl becomes a scalar tagged
 * `<phase>/<key>` (rl/reward_mean, sft/loss, pretrain/loss) at its step and wall time; every evaluation's rates
 * become `eval/<key>` (`pretrain_eval/` for pretraining's held-out ones), nested values `eval/copy/names`, and
 * categories `eval/by_category/<category>/avg`. A value the run did not log is not written: TensorBoard draws no
 * point there.
 *
 * The file is TensorBoard's own format: a TFRecord stream (per record: length as uint64 little-endian, the masked
 * CRC-32C of those 8 bytes, the data, the masked CRC-32C of the data) of serialized `tensorflow.Event` protobufs,
 * the first one holding `file_version: "brain.Event:2"`, the rest a `Summary` of `simple_value` scalars. The protobuf
 * wire format is written by `@bufbuild/protobuf`'s BinaryWriter (npm, Apache-2.0, no dependencies and no install
 * scripts, unlike protobufjs whose script makes Deno print a warning box), imported on first use only. CRC-32C is
 * Crucible's (src/util/crc.ts, shared with the studio's ZIP): a 256-entry table and a loop, where the npm packages for
 * it bring three dependencies (the AWS SDK's types, tslib) for those ten lines; tests/report/tensorboard_test.ts checks
 * it against the standard check value.
 */
import { reflectedCrc32 } from "../util/crc.ts";
import { readRun, type RunData } from "./data.ts";

/** The pinned package, imported by a specifier held in a variable so commands that do not export never fetch it. */
export const BUFBUILD_WIRE = "npm:@bufbuild/protobuf@2.17.0/wire";

/** One scalar of the event file. */
export interface Scalar {
  tag: string;
  step: number;
  /** Seconds since the Unix epoch. */
  wallTime: number;
  value: number;
}

/**
 * CRC-32C (Castagnoli, reflected polynomial 0x82F63B78), TFRecord's checksum.
 *
 * @example
 * ```ts
 * crc32c(new TextEncoder().encode("123456789")); // 0xe3069283
 * ```
 */
export const crc32c: (bytes: Uint8Array) => number = reflectedCrc32(0x82f63b78);

/** TFRecord's masked CRC: the CRC rotated right by 15 bits plus 0xa282ead8 (mod 2^32). */
export function maskedCrc32c(bytes: Uint8Array): number {
  const c = crc32c(bytes);
  return ((((c >>> 15) | (c << 17)) >>> 0) + 0xa282ead8) >>> 0;
}

/** One TFRecord: length, its masked CRC, the data, the data's masked CRC. */
export function tfRecord(data: Uint8Array): Uint8Array {
  const out = new Uint8Array(16 + data.length);
  const view = new DataView(out.buffer);
  view.setBigUint64(0, BigInt(data.length), true);
  view.setUint32(8, maskedCrc32c(out.subarray(0, 8)), true);
  out.set(data, 12);
  view.setUint32(12 + data.length, maskedCrc32c(data), true);
  return out;
}

// deno-lint-ignore no-explicit-any
type Wire = any;
let wire: Promise<Wire> | undefined;

/**
 * The serialized events: the file-version event, then one event per (wall time, step) holding that moment's scalars
 * (tensorflow.Event: wall_time = 1 double, step = 2 int64, file_version = 3 string, summary = 5; Summary.value = 1;
 * Value: tag = 1 string, simple_value = 2 float).
 */
export async function encodeEvents(scalars: readonly Scalar[], start: number): Promise<Uint8Array[]> {
  const { BinaryWriter, WireType } = await (wire ??= import(BUFBUILD_WIRE));
  const head = new BinaryWriter().tag(1, WireType.Bit64).double(start).tag(3, WireType.LengthDelimited)
    .string("brain.Event:2").finish();
  const groups = new Map<string, Scalar[]>();
  for (const s of scalars) {
    const key = `${s.wallTime} ${s.step}`;
    (groups.get(key) ?? groups.set(key, []).get(key)!).push(s);
  }
  const events = [...groups.values()].map((g) => {
    const w = new BinaryWriter().tag(1, WireType.Bit64).double(g[0].wallTime).tag(2, WireType.Varint)
      .int64(BigInt(Math.trunc(g[0].step))).tag(5, WireType.LengthDelimited).fork();
    for (const s of g) {
      w.tag(1, WireType.LengthDelimited).fork().tag(1, WireType.LengthDelimited).string(s.tag)
        .tag(2, WireType.Bit32).float(s.value).join();
    }
    return w.join().finish() as Uint8Array;
  });
  return [head as Uint8Array, ...events];
}

/** Flattens one logged line's numbers (booleans as 0/1) into `prefix/key` and `prefix/key/sub` tags. */
function flatten(prefix: string, line: Record<string, unknown>, skip: readonly string[]): [string, number][] {
  const out: [string, number][] = [];
  const visit = (tag: string, v: unknown) => {
    if (typeof v === "number" && Number.isFinite(v)) out.push([tag, v]);
    else if (typeof v === "boolean") out.push([tag, v ? 1 : 0]);
    else if (v !== null && typeof v === "object" && !Array.isArray(v)) {
      for (const [k, x] of Object.entries(v)) visit(`${tag}/${k}`, x);
    }
  };
  for (const [k, v] of Object.entries(line)) if (!skip.includes(k)) visit(`${prefix}/${k}`, v);
  return out;
}

/** The scalars of one run's logs (lines without a phase, a step or a time are left out). */
export function runScalars(run: RunData): Scalar[] {
  const out: Scalar[] = [];
  const add = (line: Record<string, unknown>, prefix: string, skip: string[]) => {
    const t = Date.parse(String(line.time));
    if (typeof line.step !== "number" || !Number.isFinite(t)) return;
    for (const [tag, value] of flatten(prefix, line, skip)) {
      out.push({ tag, step: line.step, wallTime: t / 1000, value });
    }
  };
  for (const m of run.metrics) if (typeof m.phase === "string") add(m, m.phase, ["phase", "step", "time"]);
  for (const e of run.evals) {
    if (typeof e.phase !== "string") continue;
    const prefix = e.phase === "pretrain" ? "pretrain_eval" : "eval";
    add(e, prefix, ["phase", "step", "time", "perTask", "byCategory", "splitTasks"]);
    const byCategory = (e.byCategory ?? {}) as Record<string, Record<string, unknown>>;
    for (const [c, rates] of Object.entries(byCategory)) {
      add({ ...rates, step: e.step, time: e.time }, `${prefix}/by_category/${c}`, ["step", "time"]);
    }
  }
  return out.sort((a, b) => a.wallTime - b.wallTime || a.step - b.step);
}

/**
 * Writes `<outDir>/<run name>/events.out.tfevents.<seconds>.crucible` for each run folder; returns the files written.
 * A run's old export there is replaced, so a second export does not double every point.
 *
 * @example
 * ```ts
 * await writeTensorBoard(["runs/grpo", "runs/rloo"], "/tmp/tb"); // then: tensorboard --logdir /tmp/tb
 * ```
 */
export async function writeTensorBoard(runDirs: readonly string[], outDir: string): Promise<string[]> {
  const written: string[] = [];
  for (const dir of runDirs) {
    const { run } = await readRun(dir);
    const scalars = runScalars(run);
    const start = scalars[0]?.wallTime ?? Date.now() / 1000;
    const events = await encodeEvents(scalars, start);
    const folder = `${outDir.replace(/\/+$/, "")}/${run.name}`;
    await Deno.mkdir(folder, { recursive: true });
    for await (const e of Deno.readDir(folder)) {
      if (e.isFile && /^events\.out\.tfevents\..*\.crucible$/.test(e.name)) await Deno.remove(`${folder}/${e.name}`);
    }
    const records = events.map(tfRecord);
    const bytes = new Uint8Array(records.reduce((a, r) => a + r.length, 0));
    let at = 0;
    for (const r of records) (bytes.set(r, at), at += r.length);
    const path = `${folder}/events.out.tfevents.${Math.floor(start)}.crucible`;
    // Written under a name TensorBoard ignores (no "tfevents" in it), then renamed: a TensorBoard polling the
    // folder never reads half a file.
    await Deno.writeFile(`${folder}/.export.tmp`, bytes);
    await Deno.rename(`${folder}/.export.tmp`, path);
    written.push(path);
  }
  return written;
}
