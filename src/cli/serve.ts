/**
 * `deno task serve textcraft [--port 36001] [--host 127.0.0.1] [--max-envs 4096]`: runs Crucible's own TextCraft
 * server until interrupted. Other environments are served by their upstream AgentGym servers.
 */
import { parseArgs } from "node:util";
import { serveTextCraft } from "../env/textcraft/server.ts";
import { numberFlag } from "./args.ts";

const USAGE = "Usage: deno task serve textcraft [--port 36001] [--host 127.0.0.1] [--max-envs 4096]";

/** Parses the command line and starts the named server. */
export async function main(args: string[]): Promise<void> {
  const { values, positionals } = parseArgs({
    args,
    allowPositionals: true,
    options: {
      port: { type: "string", default: "36001" },
      host: { type: "string", default: "127.0.0.1" },
      "max-envs": { type: "string", default: "4096" },
      help: { type: "boolean", short: "h" },
    },
  });
  if (values.help) return console.log(USAGE);
  if (positionals.length !== 1 || positionals[0] !== "textcraft") {
    throw new RangeError(`Only "textcraft" can be served, got "${positionals.join(" ")}". ${USAGE}`);
  }
  const port = numberFlag("--port", values.port, 36001, { lo: 0, hi: 65535, integer: true });
  const maxEnvs = numberFlag("--max-envs", values["max-envs"], 4096, { lo: 1, hi: 1 << 24, integer: true });
  const server = await serveTextCraft({ port, hostname: values.host, maxEnvs });
  console.log(`TextCraft listening on ${server.url}`);
}
