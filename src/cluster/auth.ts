/**
 * Who may join a cluster and what each member may do, as `deno task cluster up` sets it in nats-server's config. The
 * learner is the one member of the account `CRUCIBLE`, which holds JetStream (the streams, the key-value bucket and
 * the weights) and may do anything there: it makes and purges the streams, publishes prompts and weights. Each worker
 * is the one member of an account of its own, `WORKER_NAME`, which has no JetStream and sees nothing of `CRUCIBLE`
 * but what it imports from it, each import exported to the workers' accounts alone:
 *
 * - the JetStream API calls playing takes: the account's info, the info and the messages (by sequence or subject) of
 *   the key-value and weights streams, the prompt queue's consumer info and its next messages, and the acks of that
 *   queue (take, heartbeat, acknowledge);
 * - its own subject `crucible.trajectories.NAME` (so the learner knows who sent a group: the server vouches for it).
 *
 * Why accounts and not only permissions: nats-server checks a client's publish permissions on a message's subject,
 * never on its reply subject, and JetStream answers a request on whatever reply subject it carries, in the account
 * the request was made in. A worker inside `CRUCIBLE` could thus have the server publish the answer of a request it
 * may make onto a subject it may not (another worker's, which the trajectory stream stores; the version key, which
 * the bucket stores). Across an import the server answers on a reply subject of its own and hands the answer back
 * to the worker's account, where the reply subject the worker chose names nothing but its own imports. Within its
 * account a worker's permissions still allow only the subjects above and its own inbox (defence in depth).
 *
 * On disk, under the data directory (`runs/nats` by default):
 *
 * - `auth/members.json`: each member's role, name and public key (nothing secret; the server needs only these);
 * - `auth/ca.pem`, `auth/ca.key`, `auth/server.pem`, `auth/server.key` when the server speaks TLS (keys mode 0600);
 * - `creds/learner.creds`, `creds/worker-NAME.creds`: each member's credentials (credentials.ts; mode 0600), the
 *   only copies of the seeds. A member's file is what it is given; the server never reads them.
 */
import {
  type Credentials,
  inboxPrefix,
  readCredentials,
  type Role,
  WORKER_NAME,
  writeCredentials,
} from "./credentials.ts";
import { KV_BUCKET, PROMPTS, TRAJECTORY_SUBJECT, WEIGHTS_BUCKET, WORKERS } from "./nats.ts";
import { natsLib } from "./nats_lib.ts";
import { certificateNames, makeCa, serverCertificate } from "./tls.ts";

/** One member, as the server knows it. */
export interface Member {
  role: Role;
  name: string;
  /** The nkey's public key (U...). */
  publicKey: string;
}

/** What `prepareAuth` set up: the members, the TLS files when asked for, and the credentials files written now. */
export interface ClusterAuth {
  members: Member[];
  tls?: { cert: string; key: string };
  credsDir: string;
  /** Credentials files written or rewritten by this call. */
  written: string[];
}

/** The learner's account, which holds JetStream. */
export const ACCOUNT = "CRUCIBLE";

/** The account of worker `name`, alone in it. */
export function workerAccount(name: string): string {
  return `WORKER_${name}`;
}

/**
 * The JetStream API subjects every worker's account imports from the learner's: what playing takes, nothing more
 * (see the module header). `stream` marks the one whose answer is several messages (a pull of the prompt queue).
 */
export const WORKER_API: readonly { subject: string; stream?: boolean }[] = (() => {
  const api = "$JS.API", kv = `KV_${KV_BUCKET}`, obj = `OBJ_${WEIGHTS_BUCKET}`;
  return [
    { subject: `${api}.INFO` },
    // The run and version keys, and the weights objects, read message by message (weights.ts): no consumer of
    // its own, since a consumer's deliver subject could be any subject of the learner's account.
    ...[kv, obj].flatMap((s) => [{ subject: `${api}.STREAM.INFO.${s}` }, { subject: `${api}.STREAM.MSG.GET.${s}` }]),
    // The prompt queue: take, heartbeat and acknowledge.
    { subject: `${api}.CONSUMER.INFO.${PROMPTS}.${WORKERS}` },
    { subject: `${api}.CONSUMER.MSG.NEXT.${PROMPTS}.${WORKERS}`, stream: true },
    { subject: `$JS.ACK.${PROMPTS}.${WORKERS}.>` },
  ];
})();

/** The subjects a member may publish to and subscribe to, in its own account. */
export function permissions(m: Pick<Member, "role" | "name">): { publish: string[]; subscribe: string[] } {
  if (m.role === "learner") return { publish: [">"], subscribe: [">"] };
  return {
    publish: [...WORKER_API.map((i) => i.subject), `${TRAJECTORY_SUBJECT}.${m.name}`],
    subscribe: [`${inboxPrefix(m)}.>`],
  };
}

/**
 * The `accounts` block of nats-server's config for `members` (public keys, permissions, imports and exports only):
 * the learner's account with JetStream and what it exports to the workers' accounts, and one account per worker.
 */
export function authConf(members: readonly Member[]): string {
  const q = (x: string) => JSON.stringify(x);
  const list = (xs: readonly string[]) => `[${xs.map(q).join(", ")}]`;
  const user = (m: Member) => {
    const p = permissions(m);
    return `      # ${m.role} ${m.name}\n      { nkey: ${m.publicKey}, permissions: { publish: { allow: ${
      list(p.publish)
    } }, subscribe: { allow: ${list(p.subscribe)} } } }`;
  };
  const block = (name: string, lines: string[]) => `  ${name} {\n${lines.map((l) => `    ${l}`).join("\n")}\n  }`;
  const workers = members.filter((m) => m.role === "worker");
  const exports = [
    ...WORKER_API.map((i) => `{ service: ${q(i.subject)}${i.stream ? ", response_type: stream" : ""} }`),
    `{ service: ${q(`${TRAJECTORY_SUBJECT}.*`)} }`,
  ];
  const learner = block(ACCOUNT, [
    "jetstream: enabled",
    `users: [\n${members.filter((m) => m.role === "learner").map(user).join("\n")}\n    ]`,
    `exports: [\n${exports.map((e) => `      ${e}`).join("\n")}\n    ]`,
  ]);
  const own = workers.map((w) => {
    const subjects = [...WORKER_API.map((i) => i.subject), `${TRAJECTORY_SUBJECT}.${w.name}`];
    const imports = subjects.map((s) => `      { service: { account: ${ACCOUNT}, subject: ${q(s)} } }`);
    return block(workerAccount(w.name), [`users: [\n${user(w)}\n    ]`, `imports: [\n${imports.join("\n")}\n    ]`]);
  });
  return `accounts {\n${[learner, ...own].join("\n")}\n}\n`;
}

/** A member's credentials file in `credsDir`. */
export function credsPath(credsDir: string, m: Pick<Member, "role" | "name">): string {
  return m.role === "learner" ? `${credsDir}/learner.creds` : `${credsDir}/worker-${m.name}.creds`;
}

/**
 * The members and files of `dataDir`, made where missing: the learner and each worker of `workers` (existing members
 * are kept, with their keys), and with `tlsNames` a CA and a server certificate naming them (a certificate missing a
 * name is made again, by the same CA, so members' files stay valid). Credentials files are written for new members,
 * and rewritten to carry the CA when one is new.
 */
export async function prepareAuth(
  dataDir: string,
  o: { workers: readonly string[]; tlsNames?: readonly string[] },
): Promise<ClusterAuth> {
  const authDir = `${dataDir}/auth`, credsDir = `${dataDir}/creds`;
  await Deno.mkdir(authDir, { recursive: true, mode: 0o700 });
  const members = await readMembers(dataDir);
  const written: string[] = [];
  let ca: string | undefined;
  let tls: ClusterAuth["tls"];
  if (o.tlsNames) {
    const made = await ensureTls(authDir, o.tlsNames);
    ca = made.ca;
    tls = { cert: `${authDir}/server.pem`, key: `${authDir}/server.key` };
    if (made.newCa) {
      // Every member's file must now carry the CA: rewrite those still here.
      for (const m of members) {
        const path = credsPath(credsDir, m);
        const c = await readCredentials(path).catch(() => undefined);
        if (c) await writeCredentials(path, { ...c, ca }), written.push(path);
      }
    }
  } else {
    ca = await Deno.readTextFile(`${authDir}/ca.pem`).catch(() => undefined);
  }
  const wanted: Pick<Member, "role" | "name">[] = [
    { role: "learner", name: "learner" },
    ...o.workers.map((name) => ({ role: "worker" as const, name })),
  ];
  for (const w of wanted) {
    if (members.some((m) => m.role === w.role && m.name === w.name)) continue;
    const { member, path } = await newMember(credsDir, w, ca);
    members.push(member);
    written.push(path);
  }
  await writeMembers(dataDir, members);
  return { members, tls, credsDir, written };
}

/** Adds worker `name` to `dataDir`'s members (an error if it is one); returns its new credentials file. */
export async function addWorker(dataDir: string, name: string): Promise<string> {
  checkName(name);
  const members = await readMembers(dataDir);
  if (members.length === 0) {
    throw new Deno.errors.NotFound(`${dataDir} holds no cluster credentials; start it with: deno task cluster up`);
  }
  if (members.some((m) => m.role === "worker" && m.name === name)) {
    throw new Deno.errors.AlreadyExists(`Worker ${name} is a member already; revoke it first to give it a new key`);
  }
  const ca = await Deno.readTextFile(`${dataDir}/auth/ca.pem`).catch(() => undefined);
  const { member, path } = await newMember(`${dataDir}/creds`, { role: "worker", name }, ca);
  await writeMembers(dataDir, [...members, member]);
  return path;
}

/** Removes worker `name` from `dataDir`'s members and deletes its credentials file. */
export async function revokeWorker(dataDir: string, name: string): Promise<void> {
  const members = await readMembers(dataDir);
  const left = members.filter((m) => !(m.role === "worker" && m.name === name));
  if (left.length === members.length) {
    const names = members.filter((m) => m.role === "worker").map((m) => m.name).join(", ") || "none";
    throw new Deno.errors.NotFound(`No worker ${name} in ${dataDir}; its workers: ${names}`);
  }
  await writeMembers(dataDir, left);
  await Deno.remove(credsPath(`${dataDir}/creds`, { role: "worker", name })).catch(() => {});
}

/** The members recorded in `dataDir` (none before the first `cluster up` with credentials). */
export async function readMembers(dataDir: string): Promise<Member[]> {
  const text = await Deno.readTextFile(`${dataDir}/auth/members.json`).catch(() => undefined);
  return text === undefined ? [] : JSON.parse(text) as Member[];
}

async function writeMembers(dataDir: string, members: readonly Member[]): Promise<void> {
  await Deno.writeTextFile(`${dataDir}/auth/members.json`, JSON.stringify(members, null, 2) + "\n");
}

function checkName(name: string): void {
  if (!WORKER_NAME.test(name)) {
    throw new RangeError(`A worker's name is 1-64 letters, digits, - and _; got "${name}"`);
  }
}

async function newMember(
  credsDir: string,
  m: Pick<Member, "role" | "name">,
  ca: string | undefined,
): Promise<{ member: Member; path: string }> {
  checkName(m.name);
  const user = (await natsLib()).transport.nkeys.createUser();
  const c: Credentials = { ...m, seed: new TextDecoder().decode(user.getSeed()), ...(ca ? { ca } : {}) };
  const path = credsPath(credsDir, m);
  await writeCredentials(path, c);
  return { member: { ...m, publicKey: user.getPublicKey() }, path };
}

/** The CA (made once) and a server certificate naming every name; whether the CA is new. */
async function ensureTls(authDir: string, names: readonly string[]): Promise<{ ca: string; newCa: boolean }> {
  const read = (f: string) => Deno.readTextFile(`${authDir}/${f}`).catch(() => undefined);
  const secret = (f: string, text: string) => Deno.writeTextFile(`${authDir}/${f}`, text, { mode: 0o600 });
  let caCert = await read("ca.pem"), caKey = await read("ca.key");
  const newCa = !caCert || !caKey;
  if (newCa) {
    const ca = await makeCa();
    [caCert, caKey] = [ca.cert, ca.key];
    await secret("ca.key", caKey);
    await Deno.writeTextFile(`${authDir}/ca.pem`, caCert);
  }
  const cert = newCa ? undefined : await read("server.pem");
  const has = cert ? await certificateNames(cert) : [];
  if (!cert || names.some((n) => !has.includes(n))) {
    const s = await serverCertificate({ cert: caCert!, key: caKey! }, [...new Set([...has, ...names])]);
    await secret("server.key", s.key);
    await Deno.writeTextFile(`${authDir}/server.pem`, s.cert);
  }
  return { ca: caCert!, newCa };
}
