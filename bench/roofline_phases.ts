/**
 * A model's training step and decode as fractions of the adapter's measured ceilings (`bench roofline`, `bench
 * gpu`): the work each phase must do, counted from the model's shape, over the time `bench model` measured for it.
 *
 * Counted work (what the phase must do, not what the kernels happen to do):
 *   matmuls    6 · tokens · (every projection's weights + the LM head's V · C) FLOPs a training step (forward 2,
 *              backward 4); 2 · that per decoded token.
 *   attention  FlashAttention's count: 4 · H · D FLOPs per (query, key) pair and layer forward, 10 backward
 *              (recomputation not counted), over the causal pairs of the step's packed sequences.
 *   optimizer  32 bytes per parameter: AdamW reads parameter, gradient and both moments and writes three of them,
 *              the gradient norm reads the gradient once more.
 *   decode     the projections' and head's f32 weights read once per step (4 bytes each); the KV cache's reads are
 *              not counted, so the fraction is a floor.
 * Everything else (norms, SwiGLU, RoPE, embedding, log-softmax) is shown by its time alone: no rate is claimed for it.
 */
import type { ModelReport } from "./model.ts";

/** The adapter's ceilings from the microkernels. */
export interface Ceilings {
  /** f32 FMA rate, GFLOP/s (an FMA counts 2). */
  fmaGflops: number;
  /** Copy bandwidth, GB/s (bytes read plus written). */
  bandwidthGBs: number;
  fmaMs: number;
  copyMs: number;
  fmaFlops: number;
  copyBytes: number;
}

/** One phase against its ceiling. A rate or fraction not counted is absent, never 0. */
export interface Phase {
  /** "train step", "train matmuls", ..., "decode step". */
  phase: string;
  /** Time of the phase, ms: GPU time from timestamps for the kernels of one step, wall time for whole steps. */
  ms: number;
  /** Share of the training step's GPU time (kernel phases only). */
  share?: number;
  /** Counted work: FLOPs or bytes. */
  flops?: number;
  bytes?: number;
  /** work / ms, in GFLOP/s or GB/s. */
  gflops?: number;
  gbps?: number;
  /** rate / the matching ceiling. */
  ofFma?: number;
  ofBandwidth?: number;
  note: string;
}

/** The phases of one model. */
export interface ModelRoofline {
  model: string;
  phases: Phase[];
}

/** Weights of every projection and of the LM head: the matmuls' parameters. */
export function matmulParams(m: ModelReport): number {
  const { layers: L, hidden: C, intermediate: I, heads: H, kvHeads: KV, headDim: D, vocab: V } = m;
  return L * (2 * C * H * D + 2 * C * KV * D + 3 * C * I) + V * C;
}

/** Causal (query, key) pairs of the bench's packed batch: sequences of seqLen, the last one shorter. */
export function causalPairs(tokens: number, seqLen: number): number {
  let pairs = 0;
  for (let left = tokens; left > 0; left -= seqLen) {
    const s = Math.min(seqLen, left);
    pairs += (s * (s + 1)) / 2;
  }
  return pairs;
}

function flopsPhase(phase: string, ms: number, flops: number, c: Ceilings, note: string, share?: number): Phase {
  const gflops = flops / ms / 1e6;
  return { phase, ms, ...(share === undefined ? {} : { share }), flops, gflops, ofFma: gflops / c.fmaGflops, note };
}

function bytesPhase(phase: string, ms: number, bytes: number, c: Ceilings, note: string, share?: number): Phase {
  const gbps = bytes / ms / 1e6;
  return {
    phase,
    ms,
    ...(share === undefined ? {} : { share }),
    bytes,
    gbps,
    ofBandwidth: gbps / c.bandwidthGBs,
    note,
  };
}

/** The training step's and decode's phases of a `bench model` report against the ceilings. */
export function rooflinePhases(c: Ceilings, m: ModelReport): ModelRoofline {
  const phases: Phase[] = [];
  const P = matmulParams(m);
  const { tokens, seqLen } = m.train;
  const mm = 6 * tokens * P;
  const attn = 14 * m.heads * m.headDim * m.layers * causalPairs(tokens, seqLen);
  if (!m.lora) {
    const note = `${tokens} tokens (${m.train.seqs} x ${seqLen})`;
    phases.push(flopsPhase("train step, wall", m.train.bestMs, mm + attn, c, `${note}, matmuls and attention`));
    const p = m.profile;
    if (p && p.gpuMs > 0) {
      phases.push(flopsPhase("train step, GPU", p.gpuMs, mm + attn, c, `${p.timed} dispatches timed`));
      const sum = (test: (k: string) => boolean) => {
        const gs = p.hotspots.filter((g) => test(g.kernel));
        return { ms: gs.reduce((a, g) => a + g.ms, 0), share: gs.reduce((a, g) => a + g.share, 0) };
      };
      const isMatmul = (k: string) => k.startsWith("matmul ");
      const isAttention = (k: string) => k.startsWith("attention");
      const isOptimizer = (k: string) => /^(adamw|gradnorm)/.test(k);
      const g = { mm: sum(isMatmul), attn: sum(isAttention), opt: sum(isOptimizer) };
      const rest = sum((k) => !isMatmul(k) && !isAttention(k) && !isOptimizer(k));
      if (g.mm.ms > 0) phases.push(flopsPhase("train matmuls", g.mm.ms, mm, c, "6 x tokens x weights", g.mm.share));
      if (g.attn.ms > 0) {
        phases.push(flopsPhase("train attention", g.attn.ms, attn, c, "14 x H x D x causal pairs", g.attn.share));
      }
      if (g.opt.ms > 0) {
        phases.push(bytesPhase("train optimizer", g.opt.ms, 32 * m.params, c, "32 bytes a parameter", g.opt.share));
      }
      if (rest.ms > 0) {
        phases.push({ phase: "train other kernels", ms: rest.ms, share: rest.share, note: "time only, not counted" });
      }
    }
  }
  const d = m.decode;
  const stepMs = d.bestMs / (d.steps + 1);
  const note = `${d.seqs} sequences, wall time of a ${d.steps + 1}-step block (its readback included) per step`;
  phases.push(bytesPhase("decode step, weights", stepMs, 4 * P, c, `${note}; KV cache reads not counted`));
  phases.push(flopsPhase("decode step, matmuls", stepMs, 2 * P * d.seqs, c, note));
  return { model: m.model, phases };
}

const pct = (x: number) => `${(100 * x).toPrecision(x >= 0.1 ? 3 : 2)}%`;

/** The text lines of a model's phases. */
export function phaseLines(r: ModelRoofline): string[] {
  return [
    `${r.model}: phases against the ceilings`,
    ...r.phases.map((p) => {
      const share = p.share === undefined ? "" : ` (${pct(p.share)} of the step's GPU time)`;
      const rate = p.gflops !== undefined
        ? `${(p.flops! / 1e9).toPrecision(3)} GFLOP -> ${p.gflops.toPrecision(3)} GFLOP/s = ${pct(p.ofFma!)} of FMA`
        : p.gbps !== undefined
        ? `${(p.bytes! / 1e6).toPrecision(3)} MB -> ${p.gbps.toPrecision(3)} GB/s = ${pct(p.ofBandwidth!)} of bandwidth`
        : "no rate";
      return `  ${p.phase.padEnd(22)} ${p.ms.toFixed(2).padStart(9)} ms${share}: ${rate} [${p.note}]`;
    }),
  ];
}
