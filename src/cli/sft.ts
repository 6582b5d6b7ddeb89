/**
 * `deno task sft [NAME|CONFIG.yaml] [--model DIR] [--data FILE|oracle] [--out DIR] [--run-dir DIR] [key=value ...]`:
 * multi-turn supervised fine-tuning only (loss on assistant turns), from AgentGym trajectory files or generated
 * oracle trajectories; evaluates on the test split and writes the model as a Hugging Face directory.
 */
import { copy } from "./copy.ts";
import { main as train } from "./train.ts";
import { DRY_RUN_ENV, parseFlags } from "../command/args.ts";

const USAGE = `Usage: deno task sft [NAME|CONFIG.yaml] [options] [key.path=value ...]

Supervised fine-tuning only (loss on the assistant's turns of multi-turn conversations), then an evaluation on the
test split: deno task train with sft.enabled=true and no RL steps. The data: the task's own demonstrations of its train
split ("oracle"), or a file of AgentGym conversations ({"conversations": [{"from", "value"}]}) or chat messages
({"messages": [{"role", "content"}]}), as JSONL or a JSON array.

Options:
  NAME|CONFIG.yaml   a shipped config (default textcraft) or a YAML file
  --model DIR        the model to fine-tune (default: the config's)
  --data FILE|oracle the training data (config sft.data; default oracle)
  --out DIR          also write the fine-tuned model there as a Hugging Face directory
  --run-dir DIR      the run folder (default runs/sft-<time>)
  --env-url URL      a running AgentGym server for the evaluation (repeatable)
  key.path=value     config overrides (sft.epochs=3 sft.lr=1e-5 ...)

Examples:
  deno task sft textcraft --out models/textcraft-sft
  deno task sft webshop --model Qwen/Qwen2.5-0.5B-Instruct --data webshop_sft.jsonl --env-url http://127.0.0.1:36003`;

/** Runs the command. */
export async function main(args: string[]): Promise<void> {
  const { values: v, positionals } = parseFlags("deno task sft", {
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
  if (v.out && !Deno.env.get(DRY_RUN_ENV)) {
    await copy(`${runDir}/checkpoints/sft-final`, v.out);
    console.log(`Model written to ${v.out}`);
  }
}
