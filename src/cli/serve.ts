/**
 * `deno task serve NAME [options]`: runs a task's own server until interrupted, through the task registry (the Task's
 * `serve` hook, as a run's embedded server starts): TextCraft, BFCL and WebShop today (`--help` lists the options).
 * Other environments are served by their upstream AgentGym servers.
 */
import { dryRun, numberFlag, parseFlags } from "../command/args.ts";
import { applyOverride } from "../config/load.ts";
import { keysFrom } from "../env/server/access.ts";
import type { TaskOptions } from "../task/task.ts";
import { getTask, TASKS } from "../../tasks/mod.ts";

/** The tasks with a server of their own, in the registry's order. */
export function servedTasks(): string[] {
  return Object.values(TASKS).filter((t) => t.serve).map((t) => t.name);
}

const USAGE = `Usage: deno task serve ${servedTasks().join("|")} [options]

Serves Crucible's TextCraft with upstream AgentGym's routes, JSON shapes and observation strings; BFCL's
multi-turn function calling over the same protocol (/step also answers an "info" object with the executed calls
and, at each user turn's end, the checker's verdict); or WebShop over AgentGym's WebShop protocol (env_idx,
search[...] and click[...] on WebShop's pages in text mode, WebShop's reward at Buy Now; docs/webshop.md).

Options:
  --port N              port to listen on; 0 picks a free one  (default 36001, bfcl 36002, webshop 36003)
  --data-dir DIR        bfcl: BFCL's data directory, laid out as gorilla's berkeley-function-call-
                        leaderboard/bfcl_eval/data/ (BFCL_v3_multi_turn_*.json or v4 names, with
                        possible_answer/ and multi_turn_func_doc/); webshop: WebShop's data/ folder
                        (items_shuffle_1000.json and items_ins_v2_1000.json, or the full
                        items_shuffle.json and items_ins_v2.json; items_human_ins.json for human
                        goals); default: Crucible's generated tasks or catalogue
  --goals KIND          webshop with --data-dir: human, synthetic, or auto (human when
                        items_human_ins.json is there; AgentGym's server uses synthetic)  (default auto)
  --task-option K=V     any other of the task's options (task_options.K in a run config),
                        repeatable, e.g. bfcl: --task-option rewards=progress
  --host NAME           interface to bind; anything beyond loopback (127.0.0.1, ::1,
                        localhost) accepts environments from the network, warns, and
                        needs a key (--token or CRUCIBLE_ENV_TOKEN)                     (default 127.0.0.1)
  --allowed-host NAME   a name requests may call the server by (their Host), beyond the
                        loopback names and --host (bound to 0.0.0.0: this machine's name
                        and addresses); repeatable. Any other Host gets a 421 (a DNS-
                        rebinding page calls it by the attacker's name)
  --token KEY           a key (16+ characters) every request must carry as
                        Authorization: Bearer KEY; repeatable, one per client; the
                        trainer sends CRUCIBLE_ENV_TOKEN. Default: CRUCIBLE_ENV_TOKEN,
                        else none (loopback only)
  --max-envs N          most environments alive at once; /create errors past it         (default 4096)
  --max-envs-per-client N  most environments one client (address, and key when several)
                        may hold, so none can starve the rest              (default min(1024, max-envs))
  --max-env-hours H     close an environment this old however recently it was used;
                        0 never                                                          (default 6)
  --idle-minutes M      close an environment no request has touched for M minutes;
                        0 never closes one                                              (default 30)
  --header-timeout-s S  seconds a request's line and headers may take to arrive;
                        a slower one gets a 408 and its connection is closed            (default 10)
  --body-timeout-s S    seconds a request body may take to arrive after its headers;
                        a slower one gets a 408 and its connection is closed            (default 10)
  --max-body-bytes N    largest request body; a larger one gets a 413                   (default 65536)
  -h, --help            this text

Examples:
  deno task serve textcraft
  deno task serve bfcl --data-dir ~/gorilla/berkeley-function-call-leaderboard/bfcl_eval/data
  deno task serve webshop
  deno task serve webshop --data-dir ~/WebShop/data --goals synthetic
  deno task serve textcraft --host 0.0.0.0 --token "$KEY" --idle-minutes 120
    (KEY=$(openssl rand -hex 16); the trainer then runs with CRUCIBLE_ENV_TOKEN="$KEY")`;

/** Parses the command line and starts the named server. */
export async function main(args: string[]): Promise<void> {
  const { values, positionals } = parseFlags("deno task serve", {
    args,
    allowPositionals: true,
    options: {
      port: { type: "string" },
      "data-dir": { type: "string" },
      goals: { type: "string" },
      "task-option": { type: "string", multiple: true },
      host: { type: "string", default: "127.0.0.1" },
      "max-envs": { type: "string" },
      "max-envs-per-client": { type: "string" },
      "max-env-hours": { type: "string" },
      token: { type: "string", multiple: true },
      "allowed-host": { type: "string", multiple: true },
      "idle-minutes": { type: "string" },
      "header-timeout-s": { type: "string" },
      "body-timeout-s": { type: "string" },
      "max-body-bytes": { type: "string" },
      help: { type: "boolean", short: "h" },
    },
  });
  if (values.help) return console.log(USAGE);
  const served = servedTasks();
  const name = positionals[0];
  if (positionals.length !== 1) {
    throw new RangeError(
      `Name one task to serve (${served.join(", ")}), got "${positionals.join(" ")}"; --help lists the options`,
    );
  }
  const task = getTask(name);
  if (!task.serve) {
    throw new RangeError(
      `${name} has no server in Crucible: run AgentGym's own ${name} server and give its address to the trainer ` +
        `(--env-url, docs/own-environment.md). Crucible serves ${served.join(", ")}.`,
    );
  }
  const raw: Record<string, unknown> = {};
  if (values["data-dir"] !== undefined) raw.data_dir = values["data-dir"];
  if (values.goals !== undefined) {
    if (values["data-dir"] === undefined) {
      throw new RangeError("--goals chooses among a --data-dir's goals; the generated catalogue has synthetic goals");
    }
    raw.goals = values.goals;
  }
  for (const o of values["task-option"] ?? []) {
    if (!/^\w+=/.test(o)) throw new TypeError(`--task-option takes KEY=VALUE (e.g. rewards=progress), got "${o}"`);
    applyOverride(raw, o);
  }
  // The task checks its own options: a key it does not have (textcraft's data_dir) stops here, named.
  const options: TaskOptions = task.parseOptions ? task.parseOptions(raw) : refuseOptions(name, raw);
  const int = { integer: true }, seconds = { lo: 0.001, hi: 3600 };
  const maxEnvs = numberFlag("--max-envs", values["max-envs"], 4096, { lo: 1, hi: 1 << 24, ...int });
  const at = {
    // Unset: the task's usual port (AgentGym's: textcraft 36001, bfcl 36002, webshop 36003).
    port: values.port === undefined ? undefined : numberFlag("--port", values.port, 0, { lo: 0, hi: 65535, ...int }),
    hostname: values.host,
    allowedHosts: values["allowed-host"],
    maxEnvs,
    maxEnvsPerClient: numberFlag("--max-envs-per-client", values["max-envs-per-client"], Math.min(1024, maxEnvs), {
      lo: 1,
      hi: maxEnvs,
      ...int,
    }),
    maxAgeMs: numberFlag("--max-env-hours", values["max-env-hours"], 6, { lo: 0, hi: 1e5 }) * 3600_000,
    token: keysFrom(values.token, "CRUCIBLE_ENV_TOKEN"),
    idleMs: numberFlag("--idle-minutes", values["idle-minutes"], 30, { lo: 0, hi: 1e6 }) * 60_000,
    headersTimeoutMs: numberFlag("--header-timeout-s", values["header-timeout-s"], 10, seconds) * 1000,
    bodyTimeoutMs: numberFlag("--body-timeout-s", values["body-timeout-s"], 10, seconds) * 1000,
    maxBodyBytes: numberFlag("--max-body-bytes", values["max-body-bytes"], 65536, { lo: 1, hi: 1 << 30, ...int }),
  };
  if (dryRun(`would serve ${name} on ${at.hostname}:${at.port ?? "its usual port"}`)) return;
  const server = await task.serve(options, at);
  console.log(`${server.title ?? name} listening on ${server.url}${server.about ? ` (${server.about})` : ""}`);
}

/** The options of a task that takes none: none given, or an error naming them. */
function refuseOptions(name: string, raw: Record<string, unknown>): TaskOptions {
  const keys = Object.keys(raw);
  if (keys.length) throw new RangeError(`${name} takes no task options, got ${keys.join(", ")}`);
  return {};
}
