/**
 * `deno task worker --cluster URL [--creds FILE] [--name NAME] [NAME|CONFIG.yaml] [key=value ...]`: a rollout worker
 * for a learner started with `train --cluster URL`.
 */
import { type Credentials, readCredentials } from "../cluster/credentials.ts";
import { resolveConfig } from "../config/load.ts";
import { configSource } from "../config/presets.ts";
import { isCurriculum, parseCurriculum } from "../train/curriculum.ts";
import { runWorker } from "../cluster/worker.ts";
import { stopOnSignals } from "./train.ts";
import { dryRun, parseFlags } from "../command/args.ts";

const USAGE =
  `Usage: deno task worker --cluster URL [--creds FILE] [--name NAME] [NAME|CONFIG.yaml] [key.path=value ...]

Plays rollouts for the learner of deno task train ... --cluster URL: takes prompt groups from the JetStream work
queue, plays every episode of a group on the newest policy version (its SHA-256 checked), and publishes them. The
run's config (task, model, rollout settings) comes from the learner; a config given here must name the same task
and model, or the worker is refused. With the tiny model or model.path, the same files must exist here.
Ctrl-C finishes the group in progress and stops.

Options:
  --cluster URL   the NATS server (deno task cluster up prints it)
  --creds FILE    this worker's credentials (DATA/creds/worker-NAME.creds, written by cluster up); required
                  beyond loopback. The worker's name is the file's.
  --name NAME     this worker's name in the learner's metrics (letters, digits, - and _; default: the
                  credentials' name, else worker-PID)
  NAME|CONFIG     optional: the config this worker expects (checked against the learner's task and model)
  key.path=value  optional: overrides of that config

Examples:
  deno task worker --cluster nats://127.0.0.1:4222 --name a
  deno task worker --cluster nats://learner-host:4222 --creds worker-gpu2.creds textcraft`;

/** Runs the command. */
export async function main(args: string[]): Promise<void> {
  const { values: v, positionals } = parseFlags("deno task worker", {
    args,
    allowPositionals: true,
    options: {
      cluster: { type: "string" },
      creds: { type: "string" },
      name: { type: "string" },
      help: { type: "boolean", short: "h" },
    },
  });
  if (v.help) return console.log(USAGE);
  if (!v.cluster) throw new TypeError(`worker needs --cluster URL (deno task cluster up prints one). ${USAGE}`);
  if (v.name !== undefined && !/^[\w-]+$/.test(v.name)) {
    throw new RangeError(`--name must be letters, digits, - and _, got "${v.name}"`);
  }
  const overrides = positionals.filter((p) => p.includes("="));
  const names = positionals.filter((p) => !p.includes("="));
  const source = names.length > 0 || overrides.length > 0 ? await configSource(names[0] ?? "textcraft") : undefined;
  if (source && isCurriculum(source)) {
    throw new TypeError(
      `A worker plays one run config, and ${source.name} is a curriculum; give its base run config ` +
        `(${parseCurriculum(source).base}), e.g. deno task worker ${parseCurriculum(source).base} --cluster URL`,
    );
  }
  const config = source ? resolveConfig(source, overrides) : undefined;
  if (dryRun(`would join ${v.cluster} as ${v.name ?? (v.creds ? `the worker of ${v.creds}` : "worker-PID")}`)) return;
  const creds = v.creds ? await workerCredentials(v.creds, v.name) : undefined;
  const name = creds?.name ?? v.name ?? `worker-${Deno.pid}`;
  const stops = stopOnSignals("Stopping after the group in progress (a second signal quits at once).");
  try {
    const groups = await runWorker({
      url: v.cluster,
      name,
      creds,
      config,
      line: (t) => console.error(t),
      stop: stops.requested,
    });
    console.error(`Worker ${name} stopped after ${groups} groups.`);
  } finally {
    stops.release();
  }
}

/** A worker's credentials file, checked against --name. */
async function workerCredentials(path: string, name: string | undefined): Promise<Credentials> {
  const c = await readCredentials(path);
  if (c.role !== "worker") {
    throw new TypeError(`${path} holds the learner's credentials; a worker takes its own, worker-NAME.creds`);
  }
  if (name !== undefined && name !== c.name) {
    throw new TypeError(`${path} is worker ${c.name}'s credentials, but --name is ${name}; drop --name`);
  }
  return c;
}
