/**
 * `deno task sft [NAME|CONFIG.yaml] [--model DIR] [--data FILE|oracle] [--out DIR] [--run-dir DIR] [key=value ...]`:
 * multi-turn supervised fine-tuning only (loss on assistant turns), from AgentGym trajectory files or generated
 * oracle trajectories; evaluates on the test split and writes the model as a Hugging Face directory.
 */
import { parseArgs } from "node:util";
import { copy } from "./copy.ts";
import { main as train } from "./train.ts";

const USAGE = "Usage: deno task sft [NAME|CONFIG.yaml] [--model DIR] [--data FILE|oracle] [--out DIR] " +
  "[--run-dir DIR] [key.path=value ...]";

/** Runs the command. */
export async function main(args: string[]): Promise<void> {
  const { values: v, positionals } = parseArgs({
    args,
    allowPositionals: true,
    options: {
      model: { type: "string" },
      data: { type: "string" },
      out: { type: "string" },
      "run-dir": { type: "string" },
      "env-url": { type: "string", multiple: true },
      help: { type: "boolean", short: "h" },
    },
  });
  if (v.help) return console.log(USAGE);
  const runDir = v["run-dir"] ??
    `runs/sft-${new Date().toISOString().replace(/[-:]/g, "").replace("T", "-").slice(0, 15)}`;
  const pass = [...positionals, "sft.enabled=true", "trainer.total_steps=0", "--run-dir", runDir];
  if (v.data) pass.push(`sft.data=${JSON.stringify(v.data)}`);
  if (v.model) pass.push("--model", v.model);
  for (const u of v["env-url"] ?? []) pass.push("--env-url", u);
  await train(pass);
  if (v.out) {
    await copy(`${runDir}/checkpoints/sft-final`, v.out);
    console.log(`Model written to ${v.out}`);
  }
}
