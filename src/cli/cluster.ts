/**
 * `deno task cluster up|add-worker|revoke`: a local NATS server with JetStream for `train --cluster` and `worker`,
 * and who may join it. Bound beyond loopback (or with --auth) it admits only the members whose credentials it made
 * (src/cluster/auth.ts), over TLS beyond loopback; on loopback without --auth it admits every local process, as
 * before, and says so once.
 */
import { dryRun, numberFlag, parseFlags } from "../command/args.ts";
import { addWorker, credsPath, prepareAuth, readMembers, revokeWorker } from "../cluster/auth.ts";
import { WORKER_NAME } from "../cluster/credentials.ts";
import { reloadMembers, startNatsServer } from "../cluster/server.ts";
import { localNames } from "../cluster/tls.ts";
import { isLoopback } from "../env/server/access.ts";

const USAGE = `Usage: deno task cluster up [--port N] [--host HOST] [--data DIR] [--workers N|NAME,...] [--auth]
                        [--tls-name NAME ...]
       deno task cluster add-worker NAME [--data DIR]
       deno task cluster revoke NAME [--data DIR]

up: starts nats-server (Debian's package; bash .ci/setup --cluster installs it) with JetStream on a data directory and
prints its URL; Ctrl-C stops it. Then start the learner with --cluster URL and workers with deno task worker, in
other terminals or, with --host 0.0.0.0, on other machines.

Bound beyond loopback, or with --auth, it admits only the cluster's members: it makes (once, kept in DIR) an nkey for
the learner and for each worker, with the least each needs (a worker plays and publishes its own groups; only the
learner publishes weights and manages streams), and beyond loopback a CA of its own and a TLS certificate for this
machine's names. Each member's credentials file (mode 0600) is in DIR/creds: give the learner learner.creds
(train --creds) and each worker machine its own worker-NAME.creds (worker --creds), and keep them private. On
loopback without --auth every process on this machine may join, as the note it prints says. See docs/security.md.

add-worker NAME makes a new worker's credentials and has the running server admit it; revoke NAME deletes a
worker's credentials and cuts its connections.

Options:
  --port N         client port (default 4222; 0 picks a free one)
  --host HOST      address to listen on (default 127.0.0.1; 0.0.0.0 for workers on other machines)
  --data DIR       JetStream's data and the credentials (default runs/nats)
  --workers LIST   the workers to make credentials for: a count (w1, w2, ...) or names (default 4)
  --auth           credentials on loopback too (other users of this machine cannot join)
  --tls-name NAME  a further name or address members dial this machine by (repeatable; the certificate
                   names loopback, the host name and every interface address already)

Examples:
  deno task cluster up
  deno task cluster up --host 0.0.0.0 --port 4222 --data /var/lib/crucible-nats --workers gpu1,gpu2
  deno task cluster add-worker gpu3 --data /var/lib/crucible-nats
  deno task cluster revoke gpu3 --data /var/lib/crucible-nats`;

/** Runs the command. */
export async function main(args: string[]): Promise<void> {
  const { values: v, positionals } = parseFlags("deno task cluster", {
    args,
    allowPositionals: true,
    options: {
      port: { type: "string" },
      host: { type: "string" },
      data: { type: "string" },
      workers: { type: "string" },
      auth: { type: "boolean" },
      "tls-name": { type: "string", multiple: true },
      help: { type: "boolean", short: "h" },
    },
  });
  if (v.help) return console.log(USAGE);
  const [command, name] = positionals;
  const data = v.data ?? "runs/nats";
  if (command === "add-worker" || command === "revoke") {
    if (positionals.length !== 2) throw new TypeError(`cluster ${command} takes one worker's name. ${USAGE}`);
    return await members(command, name, data);
  }
  if (command !== "up" || positionals.length > 1) {
    throw new TypeError(
      `Unknown cluster command "${positionals.join(" ")}"; the commands are up, add-worker and revoke. ${USAGE}`,
    );
  }
  const host = v.host ?? "127.0.0.1";
  const port = numberFlag("--port", v.port, 4222, { lo: 0, hi: 65535, integer: true });
  const workers = workerNames(v.workers ?? "4");
  const secure = v.auth === true || !isLoopback(host);
  if (dryRun(`would start NATS on ${host}:${port}${secure ? " with credentials" : ""}`)) return;
  const auth = secure
    ? await prepareAuth(data, { workers, tlsNames: isLoopback(host) ? undefined : localNames(host, v["tls-name"]) })
    : undefined;
  const server = await startNatsServer({ dataDir: data, host, port, auth });
  // A wildcard bind is dialled by one of this machine's names.
  const url = /^(0\.0\.0\.0|::)$/.test(host) ? server.url.replace(host, Deno.hostname()) : server.url;
  console.log(`NATS with JetStream at ${url} (data ${server.dataDir}); Ctrl-C stops it.`);
  if (auth) {
    const learner = credsPath(auth.credsDir, { role: "learner", name: "learner" });
    console.log(
      `Members only${auth.tls ? ", over TLS" : ""}: each one's credentials (mode 0600) are in ${auth.credsDir}; ` +
        "give each machine its own file (e.g. with scp) and keep it private.",
    );
    console.log(`  deno task train textcraft --cluster ${url} --creds ${learner}`);
    for (const m of auth.members.filter((m) => m.role === "worker")) {
      console.log(`  deno task worker --cluster ${url} --creds ${credsPath(auth.credsDir, m)}`);
    }
    if (auth.written.length > 0) console.log(`Written now: ${auth.written.join(", ")}`);
  } else {
    console.log(`  deno task train textcraft --cluster ${url}`);
    console.log(`  deno task worker --cluster ${url}`);
    console.error(
      "note: no credentials: bound to loopback, so only this machine can reach it, and every process on this " +
        "machine may join (--auth asks for credentials; docs/security.md)",
    );
  }
  const stop = () => server.stop().then(() => Deno.exit(0));
  for (const s of ["SIGINT", "SIGTERM"] as const) Deno.addSignalListener(s, stop);
  await new Promise(() => {});
}

/** `--workers`: a count (w1..wN) or a comma-separated list of names. */
function workerNames(text: string): string[] {
  if (/^\d+$/.test(text)) {
    const n = numberFlag("--workers", text, 4, { lo: 0, hi: 1000, integer: true });
    return Array.from({ length: n }, (_, i) => `w${i + 1}`);
  }
  const names = text.split(",").map((s) => s.trim()).filter((s) => s.length > 0);
  const bad = names.find((n) => !WORKER_NAME.test(n));
  if (bad !== undefined) throw new RangeError(`--workers: "${bad}" is not a name (letters, digits, - and _)`);
  return names;
}

/** add-worker and revoke: the members file, the credentials, and the running server told. */
async function members(command: "add-worker" | "revoke", name: string, data: string): Promise<void> {
  if (dryRun(`would ${command} ${name} in ${data}`)) return;
  const path = command === "add-worker" ? await addWorker(data, name) : await revokeWorker(data, name);
  const told = await reloadMembers(data, await readMembers(data));
  const server = told ? "the running server has reloaded its members" : "the server reads it when it starts";
  if (path) console.log(`Worker ${name}'s credentials: ${path} (mode 0600); ${server}.`);
  else {console.log(
      `Worker ${name} revoked: its credentials are deleted and ${told ? "its connections closed" : server}.`,
    );}
}
