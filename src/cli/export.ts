/**
 * `deno task export --model DIR [--out DIR] [--dtype f32|f16]`: a model directory as an ONNX directory that
 * transformers.js, Optimum's ORTModelForCausalLM and onnxruntime load (onnx/model.onnx with KV cache, config.json,
 * tokenizer files, generation_config.json). Runs under src/onnx/deno.lock and Deno's global package cache
 * (src/command/onnx_lock.ts), so the protobuf package it needs is fetched on first use and never lands in the
 * project's node_modules.
 */
import { type ExportDType, exportModel } from "../onnx/export.ts";
import { dryRun, parseFlags } from "../command/args.ts";
import { localModel } from "../command/model_arg.ts";

const USAGE = `Usage: deno task export --model DIR [--out DIR] [--dtype f32|f16]

Writes a model as an ONNX decoder with KV cache, in the directory layout transformers.js and Optimum use:
onnx/model.onnx (inputs input_ids, attention_mask, position_ids, past_key_values.N.key|value; outputs logits,
present.N.key|value), config.json, tokenizer.json, tokenizer_config.json, generation_config.json (and crucible.json,
the agent's prompt and limits, when the checkpoint has one). Qwen2, Qwen2.5, Qwen3 and Llama models.

Options:
  --model DIR      a Hugging Face model directory or a Crucible checkpoint, or a Hub name org/name[@revision]
  --out DIR        where to write (default: DIR-onnx beside the model)
  --dtype T        f32 or f16: how weights are stored; arithmetic, inputs and outputs stay float32 (default f32)
  -h, --help       this text

Examples:
  deno task export --model models/crucible-tiny
  deno task export --model runs/smoke/checkpoints/final --out /tmp/agent-onnx --dtype f16   # runs/smoke: train --help`;

/** Runs the command. */
export async function main(args: string[]): Promise<void> {
  const { values: v } = parseFlags("deno task export", {
    args,
    options: {
      model: { type: "string" },
      out: { type: "string" },
      dtype: { type: "string", default: "f32" },
      help: { type: "boolean", short: "h" },
    },
  });
  if (v.help) return console.log(USAGE);
  if (!v.model) throw new TypeError(`--model DIR is required. ${USAGE}`);
  if (v.dtype !== "f32" && v.dtype !== "f16") throw new RangeError(`--dtype must be f32 or f16, got "${v.dtype}"`);
  if (dryRun(`would export ${v.model} (${v.dtype})${v.out ? ` to ${v.out}` : ""}`)) return;
  const dir = await localModel(v.model);
  // A Hub name's default output sits in the current folder, never inside the Hugging Face cache.
  const out = v.out ??
    `${(dir === v.model ? v.model : v.model.split("@")[0].split("/").pop()!).replace(/\/+$/, "")}-onnx`;
  const r = await exportModel(dir, out, { dtype: v.dtype as ExportDType });
  console.log(`Wrote ${r.path} (${(r.bytes / 2 ** 20).toFixed(1)} MiB) and the model's config and tokenizer in ${out}`);
}
