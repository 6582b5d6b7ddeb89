/**
 * Policy versions over the cluster: the learner puts version N's trained tensors (f32 safetensors, exact) in the
 * object store as `vN` and then its number, object name and SHA-256 in the KV key `version`; a worker reads the key,
 * fetches the object and checks its SHA-256 before it samples, refusing a mismatch by the version's number. The
 * object store chunks and checksums on its own; the SHA-256 in the key binds the bytes to the version the learner
 * meant. A full fine-tuning run's version is every parameter; a LoRA run's is the adapter alone (its A and B, with
 * its rank, alpha and targets in the key), which a worker applies onto the frozen base it loaded itself. A large
 * full model (GBs) fits the object store too, at the cost of one copy per version on the server.
 *
 * A worker reads an object message by message (each chunk by its subject, from the sequence after the last one)
 * rather than through the object store's own reader, which makes a consumer per read: a worker may make no
 * consumer, because a consumer's deliver subject can be any subject, and auth.ts keeps each worker to its own.
 */
import { z } from "zod";
import { LORA_MODULES, type LoraModule, type LoraSettings } from "../model/lora.ts";
import { type HostTensor, parseSafetensors, serializeSafetensors } from "../model/safetensors.ts";
import { type Cluster, WEIGHTS_BUCKET } from "./nats.ts";

/** Chunks of a weights object: well under the server's 8 MB messages, and few requests per version. */
const CHUNK_BYTES = 1 << 20;

/** The newest published version, as the KV key holds it. */
export interface VersionInfo {
  version: number;
  object: string;
  sha256: string;
  bytes: number;
  /** Present when the version is a LoRA adapter (the tensors are its A and B) rather than the full parameters. */
  lora?: LoraSettings;
}

/** What the learner writes to the version key: a version's number, object, hash and size, and LoRA settings. */
const VersionSchema = z.strictObject({
  version: z.number().int().nonnegative(),
  object: z.string().regex(/^v\d+$/),
  sha256: z.string().regex(/^[0-9a-f]{64}$/),
  bytes: z.number().int().positive(),
  lora: z.strictObject({
    rank: z.number().int().positive(),
    alpha: z.number().positive(),
    targets: z.array(z.enum(Object.keys(LORA_MODULES) as [LoraModule, ...LoraModule[]])).nonempty(),
    rslora: z.boolean().optional(),
  }).optional(),
});

/** A key-value entry a reader ignored: not what the learner writes there. */
export interface Malformed {
  key: string;
  /** The entry's revision in the bucket (a reader says each once). */
  revision: number;
  /** What is wrong with it. */
  why: string;
}

/**
 * The value of KV entry `text` checked against `schema`, or what is wrong with it (not JSON, or the schema's first
 * problem).
 */
export function checkEntry<T>(text: string, schema: z.ZodType<T>): T | { why: string } {
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch {
    return { why: `not JSON: ${JSON.stringify(text.slice(0, 60))}` };
  }
  const r = schema.safeParse(value);
  if (r.success) return r.data;
  const issue = r.error.issues[0];
  return { why: `${issue.path.join(".") || "the entry"}: ${issue.message}` };
}

/** Hex SHA-256 of bytes. */
export async function sha256(bytes: Uint8Array): Promise<string> {
  const d = await crypto.subtle.digest("SHA-256", bytes as Uint8Array<ArrayBuffer>);
  return [...new Uint8Array(d)].map((b) => b.toString(16).padStart(2, "0")).join("");
}

/**
 * Publishes version `version`: the object first, then the key, so a worker that sees the key finds the object.
 * Versions older than `keep` behind are deleted.
 */
export async function publishVersion(
  c: Cluster,
  version: number,
  tensors: ReadonlyMap<string, { shape: number[]; data: Float32Array }>,
  o: { keep?: number; lora?: LoraSettings } = {},
): Promise<VersionInfo> {
  const bytes = serializeSafetensors(tensors, { metadata: { crucible_policy_version: String(version) } });
  const info: VersionInfo = { version, object: `v${version}`, sha256: await sha256(bytes), bytes: bytes.byteLength };
  if (o.lora) info.lora = o.lora;
  await c.weights.putBlob({ name: info.object, options: { max_chunk_size: CHUNK_BYTES } }, bytes);
  await c.kv.put("version", JSON.stringify(info));
  const old = version - (o.keep ?? 2);
  if (old >= 0) await c.weights.delete(`v${old}`).catch(() => {});
  return info;
}

/**
 * The newest published version, or null before the learner published one. An entry that is not a version the
 * learner writes (with credentials no worker can write it: auth.ts) is read as none, and handed to `o.malformed`.
 */
export async function latestVersion(
  c: Cluster,
  o: { malformed?: (m: Malformed) => void } = {},
): Promise<VersionInfo | null> {
  const e = await c.kv.get("version");
  if (!e || e.operation !== "PUT" || e.length === 0) return null;
  const info = checkEntry(e.string(), VersionSchema);
  if ("why" in info) {
    o.malformed?.({ key: "version", revision: e.revision, why: info.why });
    return null;
  }
  return info as VersionInfo;
}

/**
 * Puts `info` back in the version key when the key no longer holds it as the learner published it (with credentials
 * only the learner may write it; on loopback without them any process here may); returns what the key held instead,
 * shortened, or undefined when it held `info`.
 */
export async function keepVersion(c: Cluster, info: VersionInfo): Promise<string | undefined> {
  const e = await c.kv.get("version");
  const held = e && e.operation === "PUT" ? e.string() : "none";
  if (held === JSON.stringify(info)) return undefined;
  await c.kv.put("version", JSON.stringify(info));
  return `it held ${held.length > 80 ? `${held.slice(0, 80)}...` : held}`;
}

/** The bytes of weights object `name`, read chunk by chunk (see the module header); null if it is gone. */
export async function readObject(c: Cluster, name: string): Promise<Uint8Array | null> {
  const info = await c.weights.info(name);
  if (!info || info.deleted) return null;
  const stream = `OBJ_${WEIGHTS_BUCKET}`, subject = `$O.${WEIGHTS_BUCKET}.C.${info.nuid}`;
  const out = new Uint8Array(info.size);
  let at = 0, seq = 0;
  for (let i = 0; i < info.chunks; i++) {
    // deno-lint-ignore no-explicit-any
    const m = await c.jsm.streams.getMessage(stream, { seq, next_by_subj: subject } as any);
    if (!m || at + m.data.length > info.size) return null; // replaced while read: the caller reads the newest
    out.set(m.data, at);
    at += m.data.length;
    seq = m.seq + 1;
  }
  return at === info.size ? out : null;
}

/**
 * Fetches a version's parameters after checking its SHA-256, and with `expected` (the parameter table the worker's
 * model has) that the tensors are exactly those, of those shapes, stored as f32, every value finite, and that the
 * file says it is the version asked for; a TypeError names the version and what is wrong.
 */
export async function fetchVersion(
  c: Cluster,
  info: VersionInfo,
  expected?: readonly { name: string; shape: readonly number[] }[],
): Promise<Map<string, Float32Array>> {
  const bytes = await readObject(c, info.object);
  if (!bytes) {
    throw new Deno.errors.NotFound(
      `Policy version ${info.version}: the weights object ${info.object} is gone from the object store ` +
        "(a newer version replaced it); the worker fetches the newest one",
    );
  }
  const got = await sha256(bytes);
  if (got !== info.sha256) {
    throw new TypeError(
      `Policy version ${info.version}: the weights object ${info.object} has SHA-256 ${got}, but the learner ` +
        `published ${info.sha256}; refusing to sample with corrupted weights (restart the learner to publish it again)`,
    );
  }
  const { tensors, metadata } = parseSafetensors(bytes, `policy version ${info.version}`);
  if (expected) checkTensors(info.version, tensors, metadata, expected);
  return new Map([...tensors].map(([name, t]) => [name, t.data]));
}

/** See fetchVersion: the checks of a version's tensors against the table a worker expects. */
export function checkTensors(
  version: number,
  tensors: ReadonlyMap<string, HostTensor>,
  metadata: Readonly<Record<string, string>>,
  expected: readonly { name: string; shape: readonly number[] }[],
): void {
  const refuse = (what: string) =>
    new TypeError(`Policy version ${version}: ${what}; refusing to sample with these weights`);
  if (metadata.crucible_policy_version !== String(version)) {
    throw refuse(`the file says it is version ${metadata.crucible_policy_version ?? "(none)"}`);
  }
  const names = new Set(expected.map((e) => e.name));
  const extra = [...tensors.keys()].find((n) => !names.has(n));
  if (extra !== undefined) throw refuse(`it holds ${extra}, which this model has not`);
  for (const e of expected) {
    const t = tensors.get(e.name);
    if (!t) throw refuse(`it lacks ${e.name}`);
    if (t.shape.join() !== e.shape.join()) throw refuse(`${e.name} has shape [${t.shape}], not [${e.shape}]`);
    if (t.stored !== undefined && t.stored !== "f32") throw refuse(`${e.name} is stored as ${t.stored}, not f32`);
    for (let i = 0; i < t.data.length; i++) {
      if (!Number.isFinite(t.data[i])) throw refuse(`${e.name}[${i}] is ${t.data[i]}`);
    }
  }
}
