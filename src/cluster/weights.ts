/**
 * Policy versions over the cluster: the learner puts version N's trained tensors (f32 safetensors, exact) in the
 * object store as `vN` and then its number, object name and SHA-256 in the KV key `version`; a worker reads the key,
 * fetches the object and checks its SHA-256 before it samples, refusing a mismatch by the version's number. The
 * object store chunks and checksums on its own; the SHA-256 in the key binds the bytes to the version the learner
 * meant. A full fine-tuning run's version is every parameter; a LoRA run's is the adapter alone (its A and B, with
 * its rank, alpha and targets in the key), which a worker applies onto the frozen base it loaded itself. A large
 * full model (GBs) fits the object store too, at the cost of one copy per version on the server.
 */
import type { LoraSettings } from "../model/lora.ts";
import { parseSafetensors, serializeSafetensors } from "../model/safetensors.ts";
import type { Cluster } from "./nats.ts";

/** The newest published version, as the KV key holds it. */
export interface VersionInfo {
  version: number;
  object: string;
  sha256: string;
  bytes: number;
  /** Present when the version is a LoRA adapter (the tensors are its A and B) rather than the full parameters. */
  lora?: LoraSettings;
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
  await c.weights.putBlob({ name: info.object }, bytes);
  await c.kv.put("version", JSON.stringify(info));
  const old = version - (o.keep ?? 2);
  if (old >= 0) await c.weights.delete(`v${old}`).catch(() => {});
  return info;
}

/** The newest published version, or null before the learner published one. */
export async function latestVersion(c: Cluster): Promise<VersionInfo | null> {
  const e = await c.kv.get("version");
  if (!e || e.operation !== "PUT" || e.length === 0) return null;
  return JSON.parse(e.string()) as VersionInfo;
}

/** Fetches a version's parameters after checking its SHA-256; a mismatch is refused, naming the version. */
export async function fetchVersion(c: Cluster, info: VersionInfo): Promise<Map<string, Float32Array>> {
  const bytes = await c.weights.getBlob(info.object);
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
  const { tensors } = parseSafetensors(bytes, `policy version ${info.version}`);
  return new Map([...tensors].map(([name, t]) => [name, t.data]));
}
