/**
 * The parameter table: every tensor of a model, named as in Hugging Face checkpoints, with its shape and how it
 * is initialised and decayed. Allocation, parameter counts, checkpoint I/O and optimizer state all derive from it.
 */
import type { ModelConfig } from "./config.ts";
import { decoderPlan, layerTensorList } from "./plan.ts";

/**
 * How a fresh parameter is filled. "kaiming" is PEFT's LoRA A: uniform in ±1/√fan_in (kaiming_uniform with a = √5),
 * fan_in being the last dimension.
 */
export type Init = "normal" | "ones" | "zeros" | "kaiming";

/** One parameter tensor. */
export interface ParamSpec {
  /** Hugging Face name, e.g. `model.layers.0.self_attn.q_proj.weight`. */
  name: string;
  /** The tensor's shape, row-major. */
  shape: number[];
  /** How initParams fills it. */
  init: Init;
  /** AdamW weight decay applies (matrices), or not (norms, biases). */
  decay: boolean;
}

export { EMBED, FINAL_NORM, layerNames, LM_HEAD } from "./plan.ts";
/** A critic's value head, as Hugging Face's *ForTokenClassification with one label names it (verl's critic). */
export const VALUE_HEAD = "score.weight";
export const VALUE_BIAS = "score.bias";

/**
 * Every parameter of a model in checkpoint order. With tied embeddings there is no `lm_head.weight`; a critic (a
 * value head) has `score.weight` and `score.bias` instead of an LM head.
 */
export function paramTable(c: ModelConfig): ParamSpec[] {
  const C = c.hiddenSize;
  const matrix = (name: string, shape: number[]): ParamSpec => ({ name, shape, init: "normal", decay: true });
  const norm = (name: string, n: number): ParamSpec => ({ name, shape: [n], init: "ones", decay: false });
  const bias = (name: string, n: number): ParamSpec => ({ name, shape: [n], init: "zeros", decay: false });
  const plan = decoderPlan(c);
  const out: ParamSpec[] = [matrix(plan.embed, [c.vocabSize, C])];
  for (const layer of plan.layers) {
    for (const t of layerTensorList(layer)) {
      if (t.kind === "norm") out.push(norm(t.name, t.shape[0]));
      else if (t.kind === "bias") out.push(bias(t.name, t.shape[0]));
      else out.push(matrix(t.name, t.shape));
    }
  }
  out.push(norm(plan.finalNorm.weight, C));
  if (c.valueHead) {
    // A zero value head: a fresh critic predicts 0 everywhere and learns from the returns.
    out.push({ name: VALUE_HEAD, shape: [1, C], init: "zeros", decay: true }, bias(VALUE_BIAS, 1));
  } else if (plan.head !== plan.embed) out.push(matrix(plan.head, [c.vocabSize, C]));
  return out;
}

/** Total number of parameters. */
export function paramCount(c: ModelConfig): number {
  return paramTable(c).reduce((n, p) => n + p.shape.reduce((a, b) => a * b, 1), 0);
}
