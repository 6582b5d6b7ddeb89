/**
 * Token choice on the CPU from one row of logits, with the GPU sampler's rules (src/ops/sample.ts): greedy is the
 * argmax, first index on ties; otherwise s = z / T, top-k keeps every token with s >= the k-th largest (ties kept),
 * top-p keeps the smallest most-probable set whose renormalised mass reaches topP (ties kept), and the draw is the
 * first index whose cumulative kept mass exceeds u · keptMass. The log-probability is log softmax(z / T) over the
 * whole row (T = 1 when greedy). O(V log V) only when top-k or top-p is on.
 */
import type { SampleSettings } from "../ops/sample.ts";
import { logprobTemperature } from "../util/temperature.ts";

/** The chosen id and its log-probability. */
export interface Pick {
  id: number;
  logprob: number;
}

/** Picks a token from logits `z` (one row) with uniform `u` in [0, 1) (unused when greedy). */
export function pickToken(z: ArrayLike<number>, settings: SampleSettings, u: number): Pick {
  const V = z.length, temperature = settings.temperature ?? 1;
  const T = logprobTemperature(temperature);
  let max = -Infinity, arg = 0;
  for (let i = 0; i < V; i++) {
    if (z[i] > max) {
      max = z[i];
      arg = i;
    }
  }
  const weights = new Float64Array(V);
  let total = 0;
  for (let i = 0; i < V; i++) total += weights[i] = Math.exp((z[i] - max) / T);
  const logprob = (id: number) => (z[id] - max) / T - Math.log(total);
  if (temperature === 0) return { id: arg, logprob: logprob(arg) };
  const kept = keptTokens(z, weights, settings);
  let mass = 0;
  for (let i = 0; i < V; i++) if (kept[i]) mass += weights[i];
  const goal = u * mass;
  let cum = 0, last = arg;
  for (let i = 0; i < V; i++) {
    if (!kept[i]) continue;
    cum += weights[i];
    last = i;
    if (cum > goal) return { id: i, logprob: logprob(i) };
  }
  return { id: last, logprob: logprob(last) };
}

function keptTokens(z: ArrayLike<number>, weights: Float64Array, s: SampleSettings): Uint8Array {
  const V = z.length, topK = s.topK ?? 0, topP = s.topP ?? 1;
  const kept = new Uint8Array(V).fill(1);
  if ((topK <= 0 || topK >= V) && topP >= 1) return kept;
  const order = Array.from({ length: V }, (_, i) => i).sort((a, b) => z[b] - z[a] || a - b);
  if (topK > 0 && topK < V) {
    const kth = z[order[topK - 1]];
    for (let i = 0; i < V; i++) kept[i] = z[i] >= kth ? 1 : 0;
  }
  if (topP < 1) {
    const inK = order.filter((i) => kept[i]);
    const goal = topP * inK.reduce((a, i) => a + weights[i], 0);
    let cum = 0, threshold = z[inK[inK.length - 1]];
    for (let j = 0; j < inK.length;) {
      const value = z[inK[j]];
      while (j < inK.length && z[inK[j]] === value) cum += weights[inK[j++]];
      if (cum >= goal) {
        threshold = value;
        break;
      }
    }
    for (let i = 0; i < V; i++) if (z[i] < threshold) kept[i] = 0;
  }
  return kept;
}
