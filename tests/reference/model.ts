/**
 * Float64 reference of a whole Qwen2 / Qwen3 / Llama forward over packed sequences, written from the Hugging
 * Face modelling code's equations with plain loops and no code shared with src/model. Gradients of its loss come
 * from central finite differences, so the reference has no backward of its own to get wrong.
 *
 * LoRA, as PEFT's lora.Linear computes it: when the parameters hold `<stem>.lora_A.weight` [r, in] and
 * `<stem>.lora_B.weight` [out, r] beside a projection's `<stem>.weight`, its output gains
 * scale · B · (A · x) per token (scale = lora_alpha / r, given in the batch as `lora`).
 */
import type { ModelConfig } from "../../src/model/config.ts";
import { layerNames } from "../../src/model/params.ts";

/** Parameters by Hugging Face name. */
export type RefParams = Map<string, Float64Array>;

/** One packed batch: sequences of ids; position t of a sequence is scored on ids[t + 1]. */
export interface RefBatch {
  seqs: number[][];
  /** The scale lora_alpha / r of the LoRA adapters among the parameters (default 1). */
  lora?: { scale: number };
}

function rmsnorm(x: Float64Array, w: Float64Array, eps: number): Float64Array {
  const n = w.length, out = new Float64Array(x.length);
  for (let r = 0; r < x.length / n; r++) {
    let ss = 0;
    for (let i = 0; i < n; i++) ss += x[r * n + i] ** 2;
    const s = 1 / Math.sqrt(ss / n + eps);
    for (let i = 0; i < n; i++) out[r * n + i] = x[r * n + i] * s * w[i];
  }
  return out;
}

/** y [T, N] = x [T, K] · W [N, K]ᵀ + b. */
function linear(x: Float64Array, w: Float64Array, K: number, b?: Float64Array): Float64Array {
  const N = w.length / K, T = x.length / K, y = new Float64Array(T * N);
  for (let t = 0; t < T; t++) {
    for (let n = 0; n < N; n++) {
      let s = b ? b[n] : 0;
      for (let k = 0; k < K; k++) s += x[t * K + k] * w[n * K + k];
      y[t * N + n] = s;
    }
  }
  return y;
}

/** rotate_half RoPE of every head of x [T, heads, D] at positions pos. */
function rope(x: Float64Array, pos: number[], heads: number, D: number, theta: number): Float64Array {
  const out = new Float64Array(x.length), half = D / 2;
  for (let t = 0; t < pos.length; t++) {
    for (let h = 0; h < heads; h++) {
      for (let d = 0; d < D; d++) {
        const i = (t * heads + h) * D;
        const angle = pos[t] / Math.pow(theta, (2 * (d % half)) / D);
        const rot = d < half ? -x[i + d + half] : x[i + d - half];
        out[i + d] = x[i + d] * Math.cos(angle) + rot * Math.sin(angle);
      }
    }
  }
  return out;
}

/** Logits [T, V] of every position of the packed sequences. */
export function modelLogitsRef(c: ModelConfig, p: RefParams, batch: RefBatch): Float64Array {
  const nf = finalHiddenRef(c, p, batch);
  return linear(nf, c.tieWordEmbeddings ? p.get("model.embed_tokens.weight")! : p.get("lm_head.weight")!, c.hiddenSize);
}

/** A critic's values [T] (`score.weight` [1, C], `score.bias` [1]) of every position of the packed sequences. */
export function modelValuesRef(c: ModelConfig, p: RefParams, batch: RefBatch): Float64Array {
  return linear(finalHiddenRef(c, p, batch), p.get("score.weight")!, c.hiddenSize, p.get("score.bias")!);
}

/** The final normalised hidden states [T, C]. */
function finalHiddenRef(c: ModelConfig, p: RefParams, batch: RefBatch): Float64Array {
  const get = (n: string) => {
    const t = p.get(n);
    if (!t) throw new Error(`reference: missing ${n}`);
    return t;
  };
  const C = c.hiddenSize, H = c.numHeads, KV = c.numKvHeads, D = c.headDim, I = c.intermediateSize;
  const ids = batch.seqs.flat();
  const T = ids.length;
  const pos: number[] = [], start: number[] = [];
  let s0 = 0;
  for (const s of batch.seqs) {
    s.forEach((_, i) => (pos.push(i), start.push(s0)));
    s0 += s.length;
  }
  const E = get("model.embed_tokens.weight");
  let x = new Float64Array(T * C);
  for (let t = 0; t < T; t++) for (let i = 0; i < C; i++) x[t * C + i] = E[ids[t] * C + i];
  for (let l = 0; l < c.numLayers; l++) {
    const n = layerNames(l);
    const b = (name: string) => (c.attentionBias ? get(name) : undefined);
    // A projection with its LoRA term, when the parameters hold one.
    const proj = (inp: Float64Array, name: string, K: number, bias?: Float64Array) => {
      const y = linear(inp, get(name), K, bias);
      const A = p.get(name.replace(/weight$/, "lora_A.weight")), B = p.get(name.replace(/weight$/, "lora_B.weight"));
      if (!A || !B) return y;
      const r = A.length / K, N = B.length / r, T = inp.length / K, scale = batch.lora?.scale ?? 1;
      for (let t = 0; t < T; t++) {
        for (let j = 0; j < N; j++) {
          let s = 0;
          for (let i = 0; i < r; i++) {
            let ax = 0;
            for (let kk = 0; kk < K; kk++) ax += A[i * K + kk] * inp[t * K + kk];
            s += B[j * r + i] * ax;
          }
          y[t * N + j] += scale * s;
        }
      }
      return y;
    };
    const n1 = rmsnorm(x, get(n.inputNorm), c.rmsNormEps);
    let q = proj(n1, n.q, C, b(n.qBias));
    let k = proj(n1, n.k, C, b(n.kBias));
    const v = proj(n1, n.v, C, b(n.vBias));
    if (c.qkNorm) {
      q = rmsnorm(q, get(n.qNorm), c.rmsNormEps);
      k = rmsnorm(k, get(n.kNorm), c.rmsNormEps);
    }
    q = rope(q, pos, H, D, c.ropeTheta);
    k = rope(k, pos, KV, D, c.ropeTheta);
    const o = new Float64Array(T * H * D);
    for (let t = 0; t < T; t++) {
      for (let h = 0; h < H; h++) {
        const g = Math.floor(h / (H / KV));
        const scores: number[] = [];
        for (let j = start[t]; j <= t; j++) {
          let dot = 0;
          for (let d = 0; d < D; d++) dot += q[(t * H + h) * D + d] * k[(j * KV + g) * D + d];
          scores.push(dot / Math.sqrt(D));
        }
        const m = Math.max(...scores);
        const e = scores.map((sc) => Math.exp(sc - m));
        const z = e.reduce((a, bb) => a + bb, 0);
        for (let j = start[t]; j <= t; j++) {
          const w = e[j - start[t]] / z;
          for (let d = 0; d < D; d++) o[(t * H + h) * D + d] += w * v[(j * KV + g) * D + d];
        }
      }
    }
    const attn = proj(o, n.o, H * D);
    const x2 = x.map((val, i) => val + attn[i]);
    const n2 = rmsnorm(x2, get(n.postNorm), c.rmsNormEps);
    // A toy feature no architecture has (ModelConfig.mlpBias): biases on the MLP's projections.
    const mb = (name: string) => (c.mlpBias ? get(name) : undefined);
    const gate = proj(n2, n.gate, C, mb(n.gateBias)), up = proj(n2, n.up, C, mb(n.upBias));
    const h = gate.map((g, i) => (g / (1 + Math.exp(-g))) * up[i]);
    const down = proj(h, n.down, I, mb(n.downBias));
    x = x2.map((val, i) => val + down[i]);
  }
  return rmsnorm(x, get("model.norm.weight"), c.rmsNormEps);
}

/** Per-position log-probability of the next token (0 at each sequence's last position) and entropy. */
export function modelLogprobRef(c: ModelConfig, p: RefParams, batch: RefBatch, temperature = 1) {
  const logits = modelLogitsRef(c, p, batch);
  const V = c.vocabSize;
  const logp: number[] = [], entropy: number[] = [], mask: number[] = [];
  for (const s of batch.seqs) {
    s.forEach((_, i) => {
      const row = logits.subarray((logp.length) * V, (logp.length + 1) * V).map((z) => z / temperature);
      const m = Math.max(...row);
      const lse = m + Math.log(row.reduce((a, z) => a + Math.exp(z - m), 0));
      let h = 0;
      for (const z of row) h -= Math.exp(z - lse) * (z - lse);
      const target = i + 1 < s.length ? s[i + 1] : 0;
      logp.push(row[target] - lse);
      entropy.push(h);
      mask.push(i + 1 < s.length ? 1 : 0);
    });
  }
  return { logits, logp, entropy, mask };
}

/** Mean negative log-likelihood of next tokens (the SFT loss). */
export function modelLossRef(c: ModelConfig, p: RefParams, batch: RefBatch): number {
  const { logp, mask } = modelLogprobRef(c, p, batch);
  const n = mask.reduce((a, b) => a + b, 0);
  return -logp.reduce((a, lp, i) => a + lp * mask[i], 0) / n;
}
