/**
 * `deno task serve textcraft [--port 36001] [--host 127.0.0.1] [--max-envs 4096]`: runs Crucible's own TextCraft
 * server until interrupted. Other environments are served by their upstream AgentGym servers.
 */
import { parseArgs } from "node:util";
import { serveTextCraft } from "../env/textcraft/server.ts";

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
  const port = integer("--port", values.port, 0, 65535);
  const maxEnvs = integer("--max-envs", values["max-envs"], 1, 1 << 24);
  const server = await serveTextCraft({ port, hostname: values.host, maxEnvs });
  console.log(`TextCraft listening on ${server.url}`);
}

function integer(flag: string, text: string, lo: number, hi: number): number {
  const n = Number(text);
  if (!Number.isInteger(n) || n < lo || n > hi) {
    throw new RangeError(`${flag} must be an integer in [${lo}, ${hi}], got "${text}"`);
  }
  return n;
}

if (import.meta.main) {
  try {
    await main(Deno.args);
  } catch (e) {
    console.error(e instanceof Error ? e.message : e);
    Deno.exit(2);
  }
}
