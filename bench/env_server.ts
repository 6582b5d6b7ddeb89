/**
 * `deno task bench bfcl-server [--episodes N] [--seconds S]`: steps per second of Crucible's BFCL server under N
 * concurrent episodes (default 32). The server runs in this process on a loopback port; N clients each create an
 * environment and play generated tasks with their own ground truth (one step with a turn's calls, one plain reply
 * to end the turn), over HTTP, for S seconds. Client and server share this machine's cores, so the number is a floor
 * for a server on its own machine.
 */
import { generatedSource, serveBfcl } from "../tasks/bfcl/server.ts";
import { dryRun, numberFlag, parseFlags } from "../src/command/args.ts";

/** Usage text of the `bfcl-server` subcommand. */
export const ENV_SERVER_USAGE = "Usage: deno task bench bfcl-server [--episodes N] [--seconds S] [--json]\n" +
  "  --episodes  concurrent episodes (default 32)\n" +
  "  --seconds   how long to measure (default 10)\n" +
  "  --json      print one JSON line instead of text";

/** Runs the measurement and prints steps/s, episodes/s and the share of episodes that passed. */
export async function main(args: string[]): Promise<void> {
  const { values } = parseFlags("deno task bench bfcl-server", {
    args,
    options: {
      episodes: { type: "string" },
      seconds: { type: "string" },
      json: { type: "boolean" },
      help: { type: "boolean", short: "h" },
    },
  });
  if (values.help) return console.log(ENV_SERVER_USAGE);
  const episodes = numberFlag("--episodes", values.episodes, 32, { lo: 1, hi: 4096, integer: true });
  const seconds = numberFlag("--seconds", values.seconds, 10, { lo: 0.1, hi: 3600 });
  if (dryRun(`would time ${episodes} BFCL episodes`)) return;
  const source = generatedSource();
  const server = await serveBfcl({ port: 0, source });
  const post = async (path: string, body: unknown) => {
    const res = await fetch(`${server.url}${path}`, {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: JSON.stringify(body),
    });
    return await res.json();
  };
  let steps = 0, finished = 0, passed = 0;
  const end = performance.now() + seconds * 1000;
  const client = async (k: number) => {
    const { id } = await post("/create", {});
    for (let n = k; performance.now() < end; n += episodes) {
      const index = n % source.entries.length;
      await post("/reset", { id, data_idx: index });
      let last = { done: false, reward: 0 };
      for (const turn of source.entries[index].groundTruth) {
        if (turn.length) {
          await post("/step", { id, action: `[${turn.join(", ")}]` });
          steps++;
        }
        last = await post("/step", { id, action: "Done." });
        steps++;
      }
      finished++;
      if (last.done && last.reward === 1) passed++;
    }
    await post("/close", { id });
  };
  const start = performance.now();
  await Promise.all(Array.from({ length: episodes }, (_, k) => client(k)));
  const elapsed = (performance.now() - start) / 1000;
  await server.shutdown();
  const result = {
    episodes,
    seconds: Number(elapsed.toFixed(2)),
    steps,
    steps_per_s: Number((steps / elapsed).toFixed(1)),
    episodes_per_s: Number((finished / elapsed).toFixed(2)),
    ground_truth_passed: `${passed}/${finished}`,
  };
  if (values.json) return console.log(JSON.stringify(result));
  console.log(
    `BFCL server, ${episodes} concurrent episodes over loopback HTTP (client in the same process), ` +
      `${result.seconds} s: ${result.steps_per_s} steps/s, ${result.episodes_per_s} episodes/s ` +
      `(${steps} steps; ground truth passed ${result.ground_truth_passed})`,
  );
}
