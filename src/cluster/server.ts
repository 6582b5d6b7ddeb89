/**
 * A local NATS server with JetStream for the cluster (`deno task cluster up`, the cluster tests and `bench
 * cluster`): Debian's `nats-server` started on a data directory with a config file written beside it. Messages may
 * be up to 8 MB (a played group's trajectories; NATS's default is 1 MB). Port 0 asks the server for a free port,
 * read back from its log. With `auth` (auth.ts) the server admits only the cluster's members, each with its
 * permissions, from `auth.conf` beside the config (rewritten and reloaded, SIGHUP, when members are added or
 * revoked), and with `auth.tls` requires TLS of every client.
 */
import { authConf, type Member } from "./auth.ts";

/** A running server. */
export interface NatsServer {
  url: string;
  dataDir: string;
  pid: number;
  /** Ends the server (SIGTERM, then SIGKILL after 5 s) and waits for it. */
  stop(): Promise<void>;
}

/** The largest message the server takes: a played group's trajectories fit; a larger publish is refused. */
export const MAX_PAYLOAD_BYTES = 8 * 1024 * 1024;
const MAX_PAYLOAD = "8MB";

const INSTALL_HINT = "install it with: bash .ci/setup --cluster (or apt-get install nats-server)";

/** Where Debian installs it, for users whose PATH lacks /usr/sbin. */
const SBIN = "/usr/sbin/nats-server";

/** The nats-server program to run: `binary` (default nats-server on PATH, else /usr/sbin's), or null if none runs. */
export async function natsServerBinary(binary?: string): Promise<string | null> {
  for (const b of binary ? [binary] : ["nats-server", SBIN]) {
    try {
      const out = await new Deno.Command(b, { args: ["--version"], stdout: "null", stderr: "null" }).output();
      if (out.success) return b;
    } catch { /* not this one */ }
  }
  return null;
}

/** Whether `nats-server` can be run here. */
export async function natsServerInstalled(binary?: string): Promise<boolean> {
  return (await natsServerBinary(binary)) !== null;
}

/** Starts nats-server with JetStream on `dataDir`, on `host:port` (port 0: a free one); resolves once it listens. */
export async function startNatsServer(o: {
  dataDir: string;
  host?: string;
  port?: number;
  binary?: string;
  /** false starts it without JetStream (a test of the error that case gives). */
  jetstream?: boolean;
  /** The members it admits, and its TLS certificate and key files; default: anyone, in plain text. */
  auth?: { members: readonly Member[]; tls?: { cert: string; key: string } };
}): Promise<NatsServer> {
  const host = o.host ?? "127.0.0.1", binary = await natsServerBinary(o.binary);
  if (!binary) throw new Deno.errors.NotFound(`${o.binary ?? "nats-server"} is not installed; ${INSTALL_HINT}`);
  await Deno.mkdir(o.dataDir, { recursive: true });
  const conf = `${o.dataDir}/nats.conf`;
  const port = o.port === undefined || o.port === 0 ? -1 : o.port;
  const tls = o.auth?.tls;
  if (o.auth) await Deno.writeTextFile(`${o.dataDir}/auth.conf`, authConf(o.auth.members));
  await Deno.writeTextFile(
    conf,
    `listen: "${host}:${port}"\nmax_payload: ${MAX_PAYLOAD}\npid_file: "${o.dataDir}/nats.pid"\n` +
      (o.jetstream === false ? "" : `jetstream {\n  store_dir: "${o.dataDir}/jetstream"\n}\n`) +
      (tls ? `tls {\n  cert_file: "${tls.cert}"\n  key_file: "${tls.key}"\n  timeout: 5\n}\n` : "") +
      (o.auth ? "include ./auth.conf\n" : ""),
  );
  const child = new Deno.Command(binary, { args: ["-c", conf], stdout: "null", stderr: "piped" }).spawn();
  const url = await listening(child, host);
  return {
    url,
    dataDir: o.dataDir,
    pid: child.pid,
    async stop() {
      try {
        child.kill("SIGTERM");
      } catch {
        return; // already gone
      }
      const timer = setTimeout(() => {
        try {
          child.kill("SIGKILL");
        } catch { /* gone */ }
      }, 5000);
      await child.status;
      clearTimeout(timer);
    },
  };
}

/**
 * Admits `members` on the server running on `dataDir` (if one is): rewrites its auth.conf and has it reload (SIGHUP);
 * clients whose member was removed are disconnected. Returns whether a running server was told.
 */
export async function reloadMembers(dataDir: string, members: readonly Member[]): Promise<boolean> {
  const hasAuth = await Deno.stat(`${dataDir}/auth.conf`).then(() => true, () => false);
  if (!hasAuth) return false;
  await Deno.writeTextFile(`${dataDir}/auth.conf`, authConf(members));
  const pid = Number(await Deno.readTextFile(`${dataDir}/nats.pid`).catch(() => ""));
  if (!(pid > 0)) return false;
  // Signal only the nats-server of this data directory: a stale pid file may name another process by now.
  const cmdline = await Deno.readTextFile(`/proc/${pid}/cmdline`).catch(() => "");
  if (!cmdline.includes("nats-server") || !cmdline.includes(`${dataDir}/nats.conf`)) return false;
  try {
    Deno.kill(pid, "SIGHUP");
  } catch {
    return false; // not running: the next start reads the file
  }
  // nats-server before 2.10 (Debian's 2.9.10) wires the imports of an account only on a reload whose previous
  // config had that account already: a new worker's account answers nothing until a second reload. The signal is
  // sent again once the first is being handled (the server holds one pending signal; a third would be lost).
  await new Promise((r) => setTimeout(r, RELOAD_AGAIN_MS));
  try {
    Deno.kill(pid, "SIGHUP");
  } catch { /* gone since: the next start reads the file */ }
  return true;
}

/** How long after a reload the second one is sent (see reloadMembers). */
const RELOAD_AGAIN_MS = 500;

/** Reads the server's log until it says where it listens for clients; the rest of the log is drained. */
async function listening(child: Deno.ChildProcess, host: string): Promise<string> {
  const reader = child.stderr.pipeThrough(new TextDecoderStream()).getReader();
  let log = "";
  const deadline = setTimeout(() => child.kill("SIGKILL"), 15_000);
  try {
    for (;;) {
      const { value, done } = await reader.read();
      if (done) throw new Error(`nats-server exited before it listened:\n${log.slice(-2000)}`);
      log += value;
      const m = /Listening for client connections on [^\s]*:(\d+)/.exec(log);
      if (m) {
        (async () => {
          while (!(await reader.read()).done) { /* drain */ }
        })().catch(() => {});
        return `nats://${host}:${m[1]}`;
      }
    }
  } finally {
    clearTimeout(deadline);
  }
}
