/**
 * `deno task generate --model DIR [--adapter DIR] (--prompt TEXT | --prompt-ids 1,2,3) [--chat] [--max-tokens N]
 * [--temperature T] [--top-p P] [--top-k K] [--seed S] [--json]`: prints a model's continuation of a prompt.
 * `--temperature 0` is greedy. With `--json`, one object {"ids": [...], "text": "..."} where ids are the new tokens only.
 */
import { getGpu } from "../gpu/device.ts";
import { Generator } from "../model/generate.ts";
import { loadGpuModel } from "../model/load.ts";
import { dryRun, numberFlag, parseFlags } from "../command/args.ts";
import { localModel } from "../command/model_arg.ts";

const USAGE = `Usage: deno task generate --model DIR (--prompt TEXT | --prompt-ids 1,2,3) [options]

Prints a model's continuation of a prompt (KV-cached sampling on the GPU).

Options:
  --model DIR          a Hugging Face model directory or a Crucible checkpoint, or a Hub name
                       org/name[@revision], downloaded once into the Hugging Face cache (HF_HOME)
  --adapter DIR        a PEFT LoRA adapter (a LoRA run's checkpoint) on the model, which is its base
  --prompt TEXT        the prompt as text (tokenized with the model's tokenizer)
  --prompt-ids LIST    the prompt as token ids, comma-separated
  --chat               wrap the prompt as one user message in the model's chat template
  --max-tokens N       most new tokens (default 64)
  --temperature T      0 is greedy (default 1)
  --top-p P            nucleus sampling (default 1)
  --top-k K            0 keeps every token (default 0)
  --seed S             seed of the sampling stream (default 0)
  --json               one object {"ids": [...], "text": "..."} with the new tokens only

Examples:
  deno task generate --model models/crucible-tiny --chat --temperature 0 --max-tokens 32 \\
    --prompt $'Crafting commands:\\ncraft 1 stick using 1 bamboo\\n\\nGoal: craft stick.'
  deno task generate --model Qwen/Qwen2.5-0.5B-Instruct --prompt "Hello" --chat --max-tokens 32 --json`;

/** Runs the command. */
export async function main(args: string[]): Promise<void> {
  const { values: v } = parseFlags("deno task generate", {
    args,
    options: {
      model: { type: "string" },
      adapter: { type: "string" },
      prompt: { type: "string" },
      "prompt-ids": { type: "string" },
      chat: { type: "boolean" },
      "max-tokens": { type: "string" },
      temperature: { type: "string" },
      "top-p": { type: "string" },
      "top-k": { type: "string" },
      seed: { type: "string" },
      json: { type: "boolean" },
      help: { type: "boolean", short: "h" },
    },
  });
  if (v.help) return console.log(USAGE);
  if (!v.model) throw new TypeError(`--model DIR is required. ${USAGE}`);
  if ((v.prompt === undefined) === (v["prompt-ids"] === undefined)) {
    throw new TypeError(`Give exactly one of --prompt TEXT and --prompt-ids 1,2,3. ${USAGE}`);
  }
  const maxTokens = numberFlag("--max-tokens", v["max-tokens"], 64, { lo: 1, hi: 1 << 20, integer: true });
  const temperature = numberFlag("--temperature", v.temperature, 1, { lo: 0 });
  const topP = numberFlag("--top-p", v["top-p"], 1, { lo: 0, hi: 1 });
  const topK = numberFlag("--top-k", v["top-k"], 0, { lo: 0, integer: true });
  const seed = numberFlag("--seed", v.seed, 0, { integer: true });
  if (dryRun(`would generate up to ${maxTokens} tokens with ${v.model}`)) return;
  const gpu = await getGpu();
  const dir = await localModel(v.model);
  const { config, model, tokenizer, stopIds } = await loadGpuModel(gpu, dir, { adapter: v.adapter });
  let prompt: number[];
  if (v["prompt-ids"] !== undefined) {
    prompt = v["prompt-ids"].split(",").map((s) => numberFlag("--prompt-ids", s.trim(), 0, { lo: 0, integer: true }));
    const bad = prompt.find((id) => id >= config.vocabSize);
    if (bad !== undefined) {
      throw new RangeError(`--prompt-ids has id ${bad}, past the vocabulary of ${config.vocabSize}`);
    }
  } else {
    if (!tokenizer) throw new TypeError(`${v.model} has no tokenizer.json; use --prompt-ids instead of --prompt`);
    const text = v.chat
      ? tokenizer.applyChatTemplate([{ role: "user", content: v.prompt! }], { addGenerationPrompt: true })
      : v.prompt!;
    prompt = tokenizer.encode(text);
  }
  if (prompt.length === 0) throw new RangeError("The prompt encodes to no tokens");
  const maxLen = Math.min(prompt.length + maxTokens, config.maxPositions);
  const generator = new Generator(model, { slots: 1, maxLen, blockSteps: 16 });
  const seq = generator.open(prompt, seed);
  const [out] = await generator.decode([seq], [{ maxNewTokens: maxTokens, stopIds }], { temperature, topP, topK });
  const text = tokenizer ? tokenizer.decode(out.ids, { skipSpecialTokens: true }) : "";
  if (v.json) console.log(JSON.stringify({ ids: out.ids, text }));
  else console.log(tokenizer ? text : out.ids.join(","));
}
