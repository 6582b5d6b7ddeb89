/**
 * A cluster member's credentials file (`deno task cluster up` writes one for the learner and one per worker; `train
 * --creds FILE` and `worker --creds FILE` read it): JSON holding the member's role and name, its NATS nkey seed (the
 * secret: the server knows only the public key, and the client proves it holds the seed by signing the server's
 * nonce, so the seed never crosses the network) and, when the server speaks TLS, the cluster's CA certificate, the
 * one certificate the client trusts for it. Files are written with mode 0600 in a folder of mode 0700, and a file
 * others may read is refused, as ssh refuses a private key.
 *
 * @example
 * ```ts
 * const c = await readCredentials("runs/nats/creds/worker-a.creds");
 * console.log(c.role, c.name); // worker a
 * ```
 */
import { z } from "zod";
import type { NatsLib, NodeConnectionOptions } from "./nats_lib.ts";

/** What a member may do: the learner owns the streams and publishes weights; a worker plays and publishes groups. */
export type Role = "learner" | "worker";

/** A worker's name: what its subject, its file and the learner's metrics call it. */
export const WORKER_NAME = /^[A-Za-z0-9_-]{1,64}$/;

const Schema = z.strictObject({
  crucible_cluster_credentials: z.literal(1),
  role: z.enum(["learner", "worker"]),
  name: z.string().regex(WORKER_NAME),
  /** The nkey seed of a NATS user (S... in NATS's base32 encoding). */
  seed: z.string().regex(/^SU[A-Z2-7]{56}$/),
  /** PEM of the cluster's CA when the server requires TLS. */
  ca: z.string().startsWith("-----BEGIN CERTIFICATE-----").optional(),
});

/** A member's credentials. */
export type Credentials = Omit<z.infer<typeof Schema>, "crucible_cluster_credentials">;

/** Writes `c` to `path` with mode 0600 (its folder made with mode 0700), replacing the file whole. */
export async function writeCredentials(path: string, c: Credentials): Promise<void> {
  const dir = path.includes("/") ? path.slice(0, path.lastIndexOf("/")) : ".";
  await Deno.mkdir(dir, { recursive: true, mode: 0o700 });
  const tmp = `${path}.${crypto.randomUUID()}.tmp`;
  const text = JSON.stringify({ crucible_cluster_credentials: 1, ...c }, null, 2) + "\n";
  // Created 0600 from the start, so the seed is never readable by others, not even for a moment.
  await Deno.writeTextFile(tmp, text, { mode: 0o600, createNew: true });
  await Deno.rename(tmp, path);
}

/** Reads and checks a credentials file; errors name the file and the fix. */
export async function readCredentials(path: string): Promise<Credentials> {
  let text: string;
  try {
    text = await Deno.readTextFile(path);
  } catch (e) {
    throw new Deno.errors.NotFound(
      `Cannot read the credentials file ${path} (${(e as Error).message}); deno task cluster up writes them in ` +
        "DATA/creds (runs/nats/creds by default)",
    );
  }
  const mode = (await Deno.stat(path)).mode;
  if (mode !== null && (mode & 0o077) !== 0) {
    throw new RangeError(
      `The credentials file ${path} may be read by other users (mode ${(mode & 0o777).toString(8)}); it holds a ` +
        `secret: chmod 600 ${path}`,
    );
  }
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch {
    throw new SyntaxError(`${path} is not a credentials file of deno task cluster up (not JSON)`);
  }
  const r = Schema.safeParse(value);
  if (!r.success) {
    const issue = r.error.issues[0];
    throw new SyntaxError(
      `${path} is not a credentials file of deno task cluster up (${issue.path.join(".") || "the file"}: ` +
        `${issue.message})`,
    );
  }
  const { crucible_cluster_credentials: _, ...c } = r.data;
  return c;
}

/** Where a member's replies arrive: a prefix of its own, so a worker may read no other member's replies. */
export function inboxPrefix(c: Pick<Credentials, "role" | "name">): string {
  return c.role === "learner" ? "_INBOX_learner" : `_INBOX_w_${c.name}`;
}

/**
 * The NATS client options that present `c`: its nkey, its inbox prefix, and TLS trusting the cluster's CA. `transport`
 * is the loaded client's transport (natsLib()).
 */
export function connectOptions(c: Credentials, transport: NatsLib["transport"]): Partial<NodeConnectionOptions> {
  return {
    authenticator: transport.nkeyAuthenticator(new TextEncoder().encode(c.seed)),
    inboxPrefix: inboxPrefix(c),
    ...(c.ca ? { tls: { ca: c.ca } } : {}),
  };
}
