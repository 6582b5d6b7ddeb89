/**
 * The host's seeded random generator (xoshiro128**, seeded through splitmix32). Kernels never make their own
 * randomness: the host draws numbers here and passes them in as data, so every GPU sample replays exactly.
 * The state is four u32s; save and restore it to resume a run bit for bit.
 */

/** A deterministic generator of 32-bit integers and floats in [0, 1). */
export class Rng {
  #s: Uint32Array;

  /** Seeds from any integer (only its low 32 bits and sign matter) or restores a saved state. */
  constructor(seed: number | readonly number[] = 0) {
    if (typeof seed === "number") {
      let x = (seed | 0) >>> 0;
      this.#s = new Uint32Array(4);
      for (let i = 0; i < 4; i++) {
        x = (x + 0x9e3779b9) >>> 0;
        let z = x;
        z = Math.imul(z ^ (z >>> 16), 0x85ebca6b) >>> 0;
        z = Math.imul(z ^ (z >>> 13), 0xc2b2ae35) >>> 0;
        this.#s[i] = (z ^ (z >>> 16)) >>> 0;
      }
      if (this.#s.every((v) => v === 0)) this.#s[0] = 1;
    } else {
      if (seed.length !== 4) throw new TypeError(`A generator state is 4 integers, got ${seed.length}`);
      this.#s = Uint32Array.from(seed);
    }
  }

  /** The next 32-bit unsigned integer. */
  u32(): number {
    const s = this.#s;
    const result = Math.imul(rotl(Math.imul(s[1], 5), 7), 9) >>> 0;
    const t = (s[1] << 9) >>> 0;
    s[2] ^= s[0];
    s[3] ^= s[1];
    s[1] ^= s[2];
    s[0] ^= s[3];
    s[2] ^= t;
    s[3] = rotl(s[3], 11);
    return result;
  }

  /** A float in [0, 1) with 24 random bits (exactly representable in f32). */
  float(): number {
    return (this.u32() >>> 8) / 16777216;
  }

  /** A uniform float in [lo, hi). */
  uniform(lo: number, hi: number): number {
    return lo + (hi - lo) * this.float();
  }

  /** A standard normal (Box-Muller). */
  normal(): number {
    const u = 1 - this.float();
    const v = this.float();
    return Math.sqrt(-2 * Math.log(u)) * Math.cos(2 * Math.PI * v);
  }

  /** An integer in [0, n). */
  int(n: number): number {
    if (!Number.isInteger(n) || n <= 0) throw new RangeError(`Rng.int needs a positive integer bound, got ${n}`);
    return Math.floor(this.float() * n);
  }

  /** Shuffles an array in place (Fisher-Yates) and returns it. */
  shuffle<T>(items: T[]): T[] {
    for (let i = items.length - 1; i > 0; i--) {
      const j = this.int(i + 1);
      [items[i], items[j]] = [items[j], items[i]];
    }
    return items;
  }

  /** The state, to save in a checkpoint. */
  state(): number[] {
    return [...this.#s];
  }
}

function rotl(x: number, k: number): number {
  return ((x << k) | (x >>> (32 - k))) >>> 0;
}
