/**
 * `deno task cluster up [--port N] [--host H] [--data DIR]`: starts a local NATS server with JetStream for
 * `train --cluster` and `worker`, prints its URL, and runs until Ctrl-C.
 */
import { dryRun, numberFlag, parseFlags } from "../command/args.ts";
import { startNatsServer } from "../cluster/server.ts";

const USAGE = `Usage: deno task cluster up [--port N] [--host HOST] [--data DIR]

Starts nats-server (Debian's package; bash .ci/setup --cluster installs it) with JetStream on a data directory and
prints its URL; Ctrl-C stops it. Then start the learner with --cluster URL and workers with deno task worker, in
other terminals or, with --host 0.0.0.0, on other machines.

Options:
  --port N     client port (default 4222; 0 picks a free one)
  --host HOST  address to listen on (default 127.0.0.1; 0.0.0.0 for workers on other machines)
  --data DIR   JetStream's data directory (default runs/nats)

Examples:
  deno task cluster up
  deno task cluster up --host 0.0.0.0 --port 4222 --data /var/lib/crucible-nats`;

/** Runs the command. */
export async function main(args: string[]): Promise<void> {
  const { values: v, positionals } = parseFlags("deno task cluster", {
    args,
    allowPositionals: true,
    options: {
      port: { type: "string" },
      host: { type: "string" },
      data: { type: "string" },
      help: { type: "boolean", short: "h" },
    },
  });
  if (v.help) return console.log(USAGE);
  if (positionals[0] !== "up" || positionals.length > 1) {
    throw new TypeError(`Unknown cluster command "${positionals.join(" ")}"; the command is: cluster up. ${USAGE}`);
  }
  if (dryRun(`would start NATS on ${v.host ?? "127.0.0.1"}:${v.port ?? 4222}`)) return;
  const server = await startNatsServer({
    dataDir: v.data ?? "runs/nats",
    host: v.host ?? "127.0.0.1",
    port: numberFlag("--port", v.port, 4222, { lo: 0, hi: 65535, integer: true }),
  });
  console.log(`NATS with JetStream at ${server.url} (data ${server.dataDir}); Ctrl-C stops it.`);
  console.log(`  deno task train textcraft --cluster ${server.url}`);
  console.log(`  deno task worker --cluster ${server.url}`);
  const stop = () => server.stop().then(() => Deno.exit(0));
  for (const s of ["SIGINT", "SIGTERM"] as const) Deno.addSignalListener(s, stop);
  await new Promise(() => {});
}
