/** Seeded test inputs. */
import { Rng } from "../../src/util/random.ts";

/** `n` uniform values in [lo, hi) from `seed`. */
export function uniformArray(seed: number, n: number, lo = -1, hi = 1): Float64Array {
  const rng = new Rng(seed);
  const out = new Float64Array(n);
  for (let i = 0; i < n; i++) out[i] = rng.uniform(lo, hi);
  return out;
}

/** `n` integers in [0, bound) from `seed`. */
export function intArray(seed: number, n: number, bound: number): Int32Array {
  const rng = new Rng(seed);
  const out = new Int32Array(n);
  for (let i = 0; i < n; i++) out[i] = rng.int(bound);
  return out;
}

/** Values rounded through f32 (what the GPU sees), kept in f64 for the reference. */
export function roundF32(xs: ArrayLike<number>): Float64Array {
  return Float64Array.from(Float32Array.from(xs as ArrayLike<number>));
}

/** Values rounded through f16. */
export function roundF16(xs: ArrayLike<number>): Float64Array {
  return Float64Array.from(Float16Array.from(xs as ArrayLike<number>));
}
