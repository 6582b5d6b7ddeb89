/**
 * `deno task grad --model DIR --data FILE.jsonl --out GRADS.safetensors`: the gradient of the mean negative
 * log-likelihood over masked target tokens, written under each parameter's Hugging Face name with the loss (a
 * [1] tensor named "loss"). Each line of the data is {"ids": [...], "mask": [...]}; mask[j] = 1 makes token j a
 * target, predicted at position j - 1. The debugging tool of last resort for a suspected gradient.
 */
import { Batch } from "../gpu/batch.ts";
import { getGpu } from "../gpu/device.ts";
import { loadGpuModel } from "../model/load.ts";
import { localModel } from "../command/model_arg.ts";
import { PackedInputs, packSequences } from "../model/packing.ts";
import { saveSafetensors } from "../model/safetensors.ts";
import { TensorSet } from "../model/weights.ts";
import { nllGrad } from "../train/nll.ts";
import { dryRun, parseFlags } from "../command/args.ts";

const USAGE = `Usage: deno task grad --model DIR --data FILE.jsonl --out GRADS.safetensors

The gradient of the mean negative log-likelihood over masked target tokens, written under each parameter's Hugging
Face name with the loss (a [1] tensor named "loss"): the tool of last resort for a suspected gradient, to compare
with PyTorch's on the same data.

Options:
  --model DIR    a Hugging Face model directory or a Crucible checkpoint, or a Hub name org/name[@revision]
  --data FILE    JSONL, one {"ids": [...], "mask": [...]} per line: mask[j] = 1 makes token j a target
  --out FILE     the gradients, as safetensors

Examples:
  deno task grad --model models/crucible-tiny --data probe.jsonl --out grads.safetensors
  deno task grad --model Qwen/Qwen2.5-0.5B-Instruct --data one_sequence.jsonl --out qwen_grads.safetensors`;

/** One example of the data file. */
export interface GradExample {
  ids: number[];
  mask: number[];
}

/** Parses the JSONL data, naming the line of any malformed example. */
export function parseGradData(text: string, vocabSize: number, source = "data"): GradExample[] {
  const out: GradExample[] = [];
  text.split("\n").forEach((line, i) => {
    if (line.trim() === "") return;
    let e: unknown;
    try {
      e = JSON.parse(line);
    } catch (err) {
      throw new SyntaxError(`${source} line ${i + 1}: not JSON (${(err as Error).message})`);
    }
    const { ids, mask } = (e ?? {}) as Partial<GradExample>;
    const ints = (a: unknown) => Array.isArray(a) && a.every((x) => Number.isInteger(x) && x >= 0);
    if (!ints(ids) || !ints(mask) || ids!.length !== mask!.length || ids!.length < 2) {
      throw new SyntaxError(`${source} line ${i + 1}: needs "ids" and "mask", integer arrays of equal length >= 2`);
    }
    const bad = ids!.find((x) => x >= vocabSize);
    if (bad !== undefined) {
      throw new RangeError(`${source} line ${i + 1}: id ${bad} is past the vocabulary (${vocabSize})`);
    }
    out.push({ ids: ids!, mask: mask!.map((m) => (m ? 1 : 0)) });
  });
  if (out.length === 0) throw new RangeError(`${source}: no examples`);
  return out;
}

/** Runs the command. */
export async function main(args: string[]): Promise<void> {
  const { values: v } = parseFlags("deno task grad", {
    args,
    options: {
      model: { type: "string" },
      data: { type: "string" },
      out: { type: "string" },
      help: { type: "boolean", short: "h" },
    },
  });
  if (v.help) return console.log(USAGE);
  if (!v.model || !v.data || !v.out) throw new TypeError(`--model, --data and --out are required. ${USAGE}`);
  if (dryRun(`would write ${v.model}'s gradients on ${v.data} to ${v.out}`)) return;
  const gpu = await getGpu();
  const { config, model } = await loadGpuModel(gpu, await localModel(v.model));
  const examples = parseGradData(await Deno.readTextFile(v.data), config.vocabSize, v.data);
  const count = examples.reduce((n, e) => n + e.mask.slice(1).reduce((a, b) => a + b, 0), 0);
  if (count === 0) throw new RangeError(`${v.data}: no token has mask 1 past position 0, so there is no loss`);
  // Position t is scored on ids[t + 1] with weight mask[t + 1] / count; the last position has no target.
  const weights = examples.flatMap((e) => e.ids.map((_, t) => (t + 1 < e.ids.length ? e.mask[t + 1] / count : 0)));
  const packed = packSequences(examples.map((e) => ({ ids: e.ids })));
  const inputs = new PackedInputs(gpu, packed);
  const grads = TensorSet.zeros(gpu, config);
  const nll = nllGrad(gpu, weights);
  const batch = new Batch(gpu);
  const out = model.forward(batch, inputs, { grads, lossGrad: nll.grad });
  const [logp] = await batch.read([out.logp]);
  const loss = -Array.from(logp).reduce((a, lp, t) => a + lp * weights[t], 0);
  const host = await grads.toHost();
  const tensors = new Map([...host].map(([name, data]) => [name, { shape: grads.stored(name).shape, data }]));
  tensors.set("loss", { shape: [1], data: Float32Array.of(loss) });
  await saveSafetensors(v.out, tensors as never, { dtype: "f32" });
  console.log(`loss ${loss.toFixed(6)} over ${count} target tokens; ${host.size} gradients written to ${v.out}`);
}
