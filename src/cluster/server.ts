/**
 * A local NATS server with JetStream for the cluster (`deno task cluster up`, the cluster tests and `bench
 * cluster`): Debian's `nats-server` started on a data directory with a config file written beside it. Messages may
 * be up to 8 MB (a played group's trajectories; NATS's default is 1 MB). Port 0 asks the server for a free port,
 * read back from its log.
 */

/** A running server. */
export interface NatsServer {
  url: string;
  dataDir: string;
  pid: number;
  /** Ends the server (SIGTERM, then SIGKILL after 5 s) and waits for it. */
  stop(): Promise<void>;
}

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
}): Promise<NatsServer> {
  const host = o.host ?? "127.0.0.1", binary = await natsServerBinary(o.binary);
  if (!binary) throw new Deno.errors.NotFound(`${o.binary ?? "nats-server"} is not installed; ${INSTALL_HINT}`);
  await Deno.mkdir(o.dataDir, { recursive: true });
  const conf = `${o.dataDir}/nats.conf`;
  const port = o.port === undefined || o.port === 0 ? -1 : o.port;
  await Deno.writeTextFile(
    conf,
    `listen: "${host}:${port}"\nmax_payload: 8MB\n` +
      (o.jetstream === false ? "" : `jetstream {\n  store_dir: "${o.dataDir}/jetstream"\n}\n`),
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
