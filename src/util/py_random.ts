/**
 * CPython's `random.Random` reproduced bit for bit: the MT19937 generator, seeded from an int as `random.seed(n)`
 * does (init_by_array over |n|'s 32-bit words, least significant first), `random()` from two draws (27 + 26 bits),
 * `getrandbits(k)` in 32-bit words, and `randint` / `randrange` / `choice` / `shuffle` / `sample` / `uniform` through
 * `_randbelow` by rejection with `getrandbits` (CPython 3.x). BFCL's classes draw ids and tokens from it, and their
 * ground truths hold the drawn literals, so only an exact copy replays them. Hand-written: no npm package reproduces
 * CPython's seeding and `_randbelow`.
 */

const N = 624;
const M = 397;

/** A seeded CPython-compatible random generator. */
export class PyRandom {
  #mt = new Uint32Array(N);
  #i = N + 1;

  /** `new PyRandom(1)` draws what Python's `random.Random(1)` draws. */
  constructor(seed: number | bigint) {
    this.seed(seed);
  }

  /** `random.seed(n)` for an int n (its absolute value, as CPython does). */
  seed(seed: number | bigint): void {
    let n = BigInt(seed);
    if (n < 0n) n = -n;
    const key: number[] = [];
    do {
      key.push(Number(n & 0xffffffffn));
      n >>= 32n;
    } while (n > 0n);
    this.#initByArray(key);
  }

  #initGenrand(s: number): void {
    const mt = this.#mt;
    mt[0] = s >>> 0;
    for (let i = 1; i < N; i++) {
      const prev = mt[i - 1] ^ (mt[i - 1] >>> 30);
      mt[i] = (Math.imul(1812433253, prev) + i) >>> 0;
    }
    this.#i = N;
  }

  #initByArray(key: number[]): void {
    const mt = this.#mt;
    this.#initGenrand(19650218);
    let i = 1;
    let j = 0;
    for (let k = Math.max(N, key.length); k > 0; k--) {
      const prev = mt[i - 1] ^ (mt[i - 1] >>> 30);
      mt[i] = ((mt[i] ^ Math.imul(prev, 1664525)) + key[j] + j) >>> 0;
      i++;
      j++;
      if (i >= N) {
        mt[0] = mt[N - 1];
        i = 1;
      }
      if (j >= key.length) j = 0;
    }
    for (let k = N - 1; k > 0; k--) {
      const prev = mt[i - 1] ^ (mt[i - 1] >>> 30);
      mt[i] = ((mt[i] ^ Math.imul(prev, 1566083941)) - i) >>> 0;
      i++;
      if (i >= N) {
        mt[0] = mt[N - 1];
        i = 1;
      }
    }
    mt[0] = 0x80000000;
  }

  /** One 32-bit output of MT19937 (genrand_uint32). */
  uint32(): number {
    const mt = this.#mt;
    if (this.#i >= N) {
      for (let k = 0; k < N; k++) {
        const y = (mt[k] & 0x80000000) | (mt[(k + 1) % N] & 0x7fffffff);
        mt[k] = mt[(k + M) % N] ^ (y >>> 1) ^ (y & 1 ? 0x9908b0df : 0);
      }
      this.#i = 0;
    }
    let y = mt[this.#i++];
    y ^= y >>> 11;
    y ^= (y << 7) & 0x9d2c5680;
    y ^= (y << 15) & 0xefc60000;
    y ^= y >>> 18;
    return y >>> 0;
  }

  /** `random()`: a float in [0, 1) with 53 random bits. */
  random(): number {
    const a = this.uint32() >>> 5;
    const b = this.uint32() >>> 6;
    return (a * 67108864 + b) / 9007199254740992;
  }

  /** `getrandbits(k)` as a bigint: k random bits, filled in 32-bit words from the least significant. */
  getrandbitsBig(k: number): bigint {
    if (k < 0) throw new RangeError("number of bits must be non-negative");
    if (k === 0) return 0n;
    if (k <= 32) return BigInt(this.uint32() >>> (32 - k));
    let out = 0n;
    let shift = 0n;
    for (let left = k; left > 0; left -= 32) {
      let r = this.uint32();
      if (left < 32) r >>>= 32 - left;
      out |= BigInt(r) << shift;
      shift += 32n;
    }
    return out;
  }

  /** `getrandbits(k)` as a number (k <= 53). */
  getrandbits(k: number): number {
    if (k > 53) throw new RangeError(`getrandbits(${k}) does not fit a number; use getrandbitsBig`);
    return Number(this.getrandbitsBig(k));
  }

  /** `_randbelow(n)`: uniform in [0, n) by rejection on n.bit_length() bits. */
  randbelow(n: number): number {
    if (n <= 0) return 0;
    const k = n.toString(2).length;
    let r = this.getrandbits(k);
    while (r >= n) r = this.getrandbits(k);
    return r;
  }

  /** `randrange(start, stop)` with step 1. */
  randrange(start: number, stop: number): number {
    const width = stop - start;
    if (width <= 0) throw new RangeError(`empty range in randrange(${start}, ${stop})`);
    return start + this.randbelow(width);
  }

  /** `randint(a, b)`: uniform over a..b inclusive. */
  randint(a: number, b: number): number {
    return this.randrange(a, b + 1);
  }

  /** `uniform(a, b)`: a + (b - a) * random(). */
  uniform(a: number, b: number): number {
    return a + (b - a) * this.random();
  }

  /** `choice(seq)`. */
  choice<T>(seq: readonly T[]): T {
    if (seq.length === 0) throw new RangeError("Cannot choose from an empty sequence");
    return seq[this.randbelow(seq.length)];
  }

  /** `shuffle(x)` in place (Fisher-Yates from the end, as CPython). */
  shuffle<T>(x: T[]): void {
    for (let i = x.length - 1; i > 0; i--) {
      const j = this.randbelow(i + 1);
      [x[i], x[j]] = [x[j], x[i]];
    }
  }

  /** `sample(population, k)`: CPython's two strategies (pool copy for small k, set of picks otherwise). */
  sample<T>(population: readonly T[], k: number): T[] {
    const n = population.length;
    if (k < 0 || k > n) throw new RangeError("Sample larger than population or is negative");
    const result: T[] = new Array(k);
    let setsize = 21;
    if (k > 5) setsize += 4 ** Math.ceil(Math.log(k * 3) / Math.log(4));
    if (n <= setsize) {
      const pool = [...population];
      for (let i = 0; i < k; i++) {
        const j = this.randbelow(n - i);
        result[i] = pool[j];
        pool[j] = pool[n - i - 1];
      }
    } else {
      const selected = new Set<number>();
      for (let i = 0; i < k; i++) {
        let j = this.randbelow(n);
        while (selected.has(j)) j = this.randbelow(n);
        selected.add(j);
        result[i] = population[j];
      }
    }
    return result;
  }
}
