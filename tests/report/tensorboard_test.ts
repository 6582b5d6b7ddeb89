// The TensorBoard export read back by a reader written here from the format's description, sharing no code with the
// writer: TFRecord framing with masked CRC-32C (a bitwise CRC, not the writer's table), then tensorflow.Event and
// Summary protobufs decoded from the wire format by hand. Every logged number comes back at its step and time, a
// value the run did not log has no point, and a second export replaces the first.
import assert from "node:assert/strict";
import { main as report } from "../../src/cli/report.ts";
import { crc32c, writeTensorBoard } from "../../src/report/tensorboard.ts";
import { POLICY_KEYS, writeTrainRun } from "./report_fixture.ts";

/** CRC-32C bit by bit (polynomial 0x82F63B78, reflected). */
function crcBitwise(bytes: Uint8Array): number {
  let c = ~0 >>> 0;
  for (const b of bytes) {
    c ^= b;
    for (let k = 0; k < 8; k++) c = (c >>> 1) ^ (0x82f63b78 & -(c & 1));
  }
  return ~c >>> 0;
}

const masked = (bytes: Uint8Array) => {
  const c = crcBitwise(bytes);
  return (((c >>> 15) | (c << 17)) + 0xa282ead8) >>> 0;
};

/** The records of a TFRecord file; throws on a bad length or data checksum. */
function records(file: Uint8Array): Uint8Array[] {
  const out: Uint8Array[] = [];
  const view = new DataView(file.buffer, file.byteOffset, file.byteLength);
  for (let at = 0; at < file.length;) {
    const len = Number(view.getBigUint64(at, true));
    assert.equal(view.getUint32(at + 8, true), masked(file.subarray(at, at + 8)), `length CRC at byte ${at}`);
    const data = file.subarray(at + 12, at + 12 + len);
    assert.equal(view.getUint32(at + 12 + len, true), masked(data), `data CRC at byte ${at}`);
    out.push(data);
    at += 16 + len;
  }
  return out;
}

type Field = { no: number; wire: number; value: bigint | Uint8Array | DataView };

/** A protobuf message's fields in order (varint, 64-bit, length-delimited and 32-bit wire types). */
function fields(msg: Uint8Array): Field[] {
  const out: Field[] = [];
  let at = 0;
  const varint = () => {
    let v = 0n, shift = 0n;
    for (;;) {
      const b = msg[at++];
      v |= BigInt(b & 0x7f) << shift;
      shift += 7n;
      if (!(b & 0x80)) return v;
    }
  };
  while (at < msg.length) {
    const key = Number(varint()), no = key >> 3, wire = key & 7;
    if (wire === 0) out.push({ no, wire, value: varint() });
    else if (wire === 1) (out.push({ no, wire, value: new DataView(msg.buffer, msg.byteOffset + at, 8) }), at += 8);
    else if (wire === 5) (out.push({ no, wire, value: new DataView(msg.buffer, msg.byteOffset + at, 4) }), at += 4);
    else if (wire === 2) {
      const len = Number(varint());
      out.push({ no, wire, value: msg.subarray(at, at + len) });
      at += len;
    } else throw new Error(`wire type ${wire}`);
  }
  return out;
}

interface Event {
  wallTime: number;
  step: number;
  fileVersion?: string;
  values: { tag: string; value: number }[];
}

function decodeEvent(data: Uint8Array): Event {
  const e: Event = { wallTime: NaN, step: 0, values: [] };
  const text = (v: Field["value"]) => new TextDecoder().decode(v as Uint8Array);
  for (const f of fields(data)) {
    if (f.no === 1) e.wallTime = (f.value as DataView).getFloat64(0, true);
    if (f.no === 2) e.step = Number(f.value as bigint);
    if (f.no === 3) e.fileVersion = text(f.value);
    if (f.no === 5) {
      for (const v of fields(f.value as Uint8Array).filter((x) => x.no === 1)) {
        const parts = fields(v.value as Uint8Array);
        const tag = text(parts.find((p) => p.no === 1)!.value);
        const value = (parts.find((p) => p.no === 2)!.value as DataView).getFloat32(0, true);
        e.values.push({ tag, value });
      }
    }
  }
  return e;
}

async function readEvents(dir: string): Promise<{ files: string[]; events: Event[] }> {
  const files: string[] = [];
  for await (const f of Deno.readDir(dir)) files.push(f.name);
  const tf = files.filter((f) => f.includes("tfevents"));
  assert.equal(tf.length, 1, `event files: ${files}`);
  return { files, events: records(await Deno.readFile(`${dir}/${tf[0]}`)).map(decodeEvent) };
}

/** tag -> [step, value, wall time] points. */
function byTag(events: Event[]): Map<string, [number, number, number][]> {
  const out = new Map<string, [number, number, number][]>();
  for (const e of events) {
    for (const v of e.values) {
      (out.get(v.tag) ?? out.set(v.tag, []).get(v.tag)!).push([e.step, v.value, e.wallTime]);
    }
  }
  return out;
}

Deno.test("crc32c gives the standard check value and agrees with a bitwise CRC", () => {
  const check = new TextEncoder().encode("123456789");
  assert.equal(crc32c(check), 0xe3069283);
  const bytes = Uint8Array.from({ length: 1000 }, (_, i) => (i * 37 + 11) & 255);
  assert.equal(crc32c(bytes), crcBitwise(bytes));
});

Deno.test("the TensorBoard export reads back with every logged scalar at its step and time, and nothing else", async () => {
  const dir = await Deno.makeTempDir();
  await writeTrainRun(`${dir}/run`);
  const written = await writeTensorBoard([`${dir}/run`], `${dir}/tb`);
  assert.equal(written.length, 1);
  assert.match(written[0], /\/tb\/run\/events\.out\.tfevents\.\d+\.crucible$/);
  const { events } = await readEvents(`${dir}/tb/run`);
  assert.equal(events[0].fileVersion, "brain.Event:2");
  const tags = byTag(events.slice(1));

  const lines = (f: string) => Deno.readTextFileSync(`${dir}/run/${f}`).trim().split("\n").map((l) => JSON.parse(l));
  const rl = lines("metrics.jsonl").filter((m) => m.phase === "rl");
  assert.deepEqual(
    tags.get("rl/reward_mean"),
    rl.map((m) => [m.step, Math.fround(m.reward_mean), Date.parse(m.time) / 1000]),
  );
  // Step 4 logged no policy numbers: TensorBoard gets no point there.
  for (const k of POLICY_KEYS) {
    assert.deepEqual(tags.get(`rl/${k}`)!.map((p) => p[0]), [1, 2, 3, 5, 6, 7, 8, 9, 10, 11, 12], k);
  }
  assert.deepEqual(tags.get("sft/loss")!.map((p) => p[0]), [1, 2, 3, 4, 5]);
  assert.deepEqual(tags.get("sft/applied")!.map((p) => p[1]), [1, 1, 1, 1, 1]);
  assert.deepEqual(tags.get("eval/avg")!.map((p) => p.slice(0, 2)), [[0, 0.25], [6, 0.5], [12, 0.75]]);
  assert.deepEqual(tags.get("eval/by_category/depth 2/avg")!.map((p) => p.slice(0, 2)), [[0, 0], [6, 0], [12, 0.5]]);
  // Every number of every line, and no other tag.
  const expected = new Set([
    ...lines("metrics.jsonl").flatMap((m) =>
      Object.keys(m).filter((k) => !["phase", "step", "time"].includes(k)).map((k) => `${m.phase}/${k}`)
    ),
    ...["tasks", "episodes", "avg", "pass", "meanReward", "samples", "envFailures"].map((k) => `eval/${k}`),
    ...["depth 1", "depth 2"].flatMap((c) =>
      ["tasks", "episodes", "avg", "pass", "meanReward"].map((k) => `eval/by_category/${c}/${k}`)
    ),
  ]);
  assert.deepEqual([...tags.keys()].sort(), [...expected].sort());

  // A second export, through the command, replaces the first rather than adding a second file.
  await report([`${dir}/run`, "--tensorboard", `${dir}/tb`]);
  const again = await readEvents(`${dir}/tb/run`);
  assert.deepEqual(again.files.filter((f) => !f.startsWith("events.")), []);
  assert.deepEqual(byTag(again.events.slice(1)), tags);
  await Deno.remove(dir, { recursive: true });
});

Deno.test("--tensorboard with no folder names the fix", async () => {
  const dir = await Deno.makeTempDir();
  await writeTrainRun(`${dir}/run`);
  await assert.rejects(() => report([`${dir}/run`, "--tensorboard", ""]), /--tensorboard needs a folder/);
  await assert.rejects(Deno.stat(`${dir}/run/report.html`), Deno.errors.NotFound, "nothing written on bad input");
  await Deno.remove(dir, { recursive: true });
});
