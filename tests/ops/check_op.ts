/**
 * One checker of an op against its f64 reference, forward and (where the op has one) backward: the shape of
 * tinygrad's `helper_test_op`. A test names its inputs (host arrays with shapes), how to record the op on the GPU
 * and what the reference computes; {@linkcode checkOp} uploads the inputs, runs both sides, reads every GPU output
 * in one readback and compares element by element with {@linkcode assertClose}. With a backward it also uploads the
 * upstream gradients, compares the GPU's input gradients with the backward reference, and checks that reference
 * itself by central finite differences of the forward reference (the loss Σ upstream · output), at a few sampled
 * elements of each input so large inputs stay cheap. `backward.deterministic` runs the GPU backward twice and
 * requires bit-identical gradients.
 *
 * Adding an op's test: write its references in tests/reference/<op>.ts, then one call:
 *
 * ```ts
 * await checkOp({
 *   name: "swiglu",
 *   inputs: { g: { data: g, shape: [T, I] }, u: { data: u, shape: [T, I] } },
 *   forward: (batch, x) => { const h = zeros(batch.gpu, [T, I]); swigluForward(batch, x.g, x.u, h); return { h }; },
 *   reference: (x) => ({ h: swigluRef(x.g, x.u) }),
 *   backward: {
 *     upstream: { h: dh },
 *     gpu: (batch, x, dy) => { ... swigluBackward(batch, x.g, x.u, dy.h, dg, du); return { g: dg, u: du }; },
 *     reference: (x, dy) => { const r = swigluBackwardRef(x.g, x.u, dy.h); return { g: r.dg, u: r.du }; },
 *   },
 *   tol: { atol: 1e-6, rtol: 2e-5 },
 * });
 * ```
 */
import { Batch } from "../../src/gpu/batch.ts";
import type { Gpu } from "../../src/gpu/device.ts";
import type { DType, Tensor } from "../../src/gpu/tensor.ts";
import { fromHost, zeros } from "../../src/gpu/tensor.ts";
import { assertClose, type Tolerance } from "../reference/check.ts";
import { dot } from "../reference/finite_diff.ts";
import { testGpu } from "../no_gpu.ts";

/** One input: its values (as the reference sees them: round f32 inputs on the host first), shape and GPU dtype. */
export interface OpInput {
  data: ArrayLike<number>;
  shape: number[];
  /** Default f32. Integer inputs (ids, targets) are never differentiated. */
  dtype?: DType;
}

/** Host arrays by name, as the references take them. */
export type HostArrays = Record<string, Float64Array>;

/** The backward part of {@linkcode OpCheck}. Gradients are keyed by the input they belong to. */
export interface OpBackward {
  /** Upstream gradient of each output that has one, keyed by the output's name, same length as the output. */
  upstream: Record<string, ArrayLike<number>>;
  /**
   * Records the backward: gets the uploaded inputs, the uploaded upstream gradients and the forward's GPU outputs
   * (e.g. a saved rstd), returns the gradient tensors keyed by input name.
   */
  gpu: (batch: Batch, x: Record<string, Tensor>, dy: Record<string, Tensor>, y: Record<string, Tensor>) => Record<
    string,
    Tensor
  >;
  /** f64 reference of the gradients, keyed by input name. */
  reference: (x: HostArrays, dy: HostArrays) => Record<string, ArrayLike<number>>;
  /**
   * Elements of each differentiated input probed by finite differences (spread over the input, first and last
   * included); 0 skips the probe. Default 24.
   */
  probes?: number;
  /**
   * Records the backward twice in the same batch and requires the two runs' gradients bit for bit equal, for
   * kernels that promise it (no atomics, a fixed summation order). `gpu` must then leave its inputs intact: one
   * that writes its gradient over an input (logprob's) cannot run twice. Default false.
   */
  deterministic?: boolean;
}

/** What {@linkcode checkOp} checks. */
export interface OpCheck {
  /** Names the case in failure messages. */
  name: string;
  inputs: Record<string, OpInput>;
  /** Records the forward on the GPU; returns the output tensors by name (every one is compared). */
  forward: (batch: Batch, x: Record<string, Tensor>) => Record<string, Tensor>;
  /** f64 reference of the forward: an array per output name of `forward`. */
  reference: (x: HostArrays) => Record<string, ArrayLike<number>>;
  backward?: OpBackward;
  /** One tolerance for every comparison, or one per output or gradient name (gradients as `d<input>`). */
  tol: Tolerance | Record<string, Tolerance>;
  /** The device to run on (default the shared test GPU): a device created without a feature, to test a fallback. */
  gpu?: Gpu;
}

function toleranceOf(tol: OpCheck["tol"], key: string): Tolerance {
  if ("atol" in tol && typeof tol.atol === "number") return tol as Tolerance;
  const t = (tol as Record<string, Tolerance>)[key];
  if (!t) throw new TypeError(`checkOp: no tolerance for "${key}"; give one for every output and d<input>`);
  return t;
}

/** f64 copies of the host inputs, the reference's view. */
function hostArrays(inputs: Record<string, { data: ArrayLike<number> }>): HostArrays {
  return Object.fromEntries(Object.entries(inputs).map(([k, v]) => [k, Float64Array.from(v.data)]));
}

/**
 * The backward reference against central finite differences of the forward reference: d/dx_i of
 * Σ_o upstream_o · y_o(x), at `probes` elements of each input the reference differentiates.
 */
function checkByFiniteDifferences(c: OpCheck, b: OpBackward, x: HostArrays, dy: HostArrays): void {
  const grads = b.reference(x, dy);
  const probes = b.probes ?? 24;
  const loss = (probe: HostArrays) => {
    const y = c.reference(probe);
    let s = 0;
    for (const [name, w] of Object.entries(dy)) s += dot(w, y[name]);
    return s;
  };
  for (const [name, grad] of Object.entries(grads)) {
    const n = x[name].length;
    if (probes === 0 || n === 0) continue;
    const picks = [
      ...new Set(
        Array.from({ length: Math.min(probes, n) }, (_, i) => Math.round(i * (n - 1) / Math.max(probes - 1, 1))),
      ),
    ];
    const probe = { ...x, [name]: Float64Array.from(x[name]) };
    const numeric: number[] = [], analytic: number[] = [];
    for (const i of picks) {
      const step = 1e-5 * Math.max(1, Math.abs(x[name][i]));
      probe[name][i] = x[name][i] + step;
      const up = loss(probe);
      probe[name][i] = x[name][i] - step;
      const down = loss(probe);
      probe[name][i] = x[name][i];
      numeric.push((up - down) / (2 * step));
      analytic.push(grad[i]);
    }
    const scale = Math.max(1, ...numeric.map(Math.abs));
    assertClose(`${c.name}: reference d${name} vs finite differences`, analytic, numeric, {
      atol: 1e-6 * scale,
      rtol: 1e-5,
    });
  }
}

/**
 * Checks an op's GPU forward (and backward) against its f64 reference; throws naming the case, the output and the
 * worst element. Releases every tensor it uploaded or was given back.
 */
export async function checkOp(c: OpCheck): Promise<void> {
  const gpu = c.gpu ?? await testGpu();
  const x = hostArrays(c.inputs);
  // Deno panics on a zero-byte writeBuffer: an empty input (a product with K = 0) is allocated, not uploaded.
  const upload = (v: OpInput) =>
    v.data.length > 0
      ? fromHost(gpu, Array.from(v.data), v.shape, v.dtype ?? "f32")
      : zeros(gpu, v.shape, v.dtype ?? "f32");
  const tx = Object.fromEntries(Object.entries(c.inputs).map(([k, v]) => [k, upload(v)]));
  let ty: Record<string, Tensor> = {}, tdy: Record<string, Tensor> = {};
  let tg: Record<string, Tensor> = {}, tg2: Record<string, Tensor> = {};
  try {
    const batch = new Batch(gpu);
    ty = c.forward(batch, tx);
    const outNames = Object.keys(ty);
    let gradNames: string[] = [];
    if (c.backward) {
      const b = c.backward;
      tdy = Object.fromEntries(
        Object.entries(b.upstream).map(([k, v]) => {
          if (!ty[k]) throw new TypeError(`checkOp ${c.name}: upstream "${k}" names no output of the forward`);
          return [k, fromHost(gpu, Array.from(v), ty[k].shape)];
        }),
      );
      tg = b.gpu(batch, tx, tdy, ty);
      gradNames = Object.keys(tg);
      if (b.deterministic) tg2 = b.gpu(batch, tx, tdy, ty);
    }
    // One readback for every output and gradient (and the second run's gradients).
    const got = await batch.read([
      ...outNames.map((k) => ty[k]),
      ...gradNames.map((k) => tg[k]),
      ...(c.backward?.deterministic ? gradNames.map((k) => tg2[k]) : []),
    ]);
    const ref = c.reference(x);
    outNames.forEach((k, i) => {
      if (!ref[k]) throw new TypeError(`checkOp ${c.name}: the reference returns no "${k}"`);
      assertClose(`${c.name}: ${k}`, got[i], ref[k], toleranceOf(c.tol, k));
    });
    if (c.backward) {
      const dy = hostArrays(Object.fromEntries(Object.entries(c.backward.upstream).map(([k, v]) => [k, { data: v }])));
      const grads = c.backward.reference(x, dy);
      gradNames.forEach((k, i) => {
        if (!grads[k]) throw new TypeError(`checkOp ${c.name}: the backward reference returns no gradient of "${k}"`);
        assertClose(`${c.name}: d${k}`, got[outNames.length + i], grads[k], toleranceOf(c.tol, `d${k}`));
      });
      if (c.backward.deterministic) {
        gradNames.forEach((k, i) => {
          const [a, b] = [got[outNames.length + i], got[outNames.length + gradNames.length + i]];
          const at = Array.from(a).findIndex((v, j) => !Object.is(v, b[j]));
          if (at >= 0) {
            throw new Error(`${c.name}: d${k} differs between two backward runs at [${at}]: ${a[at]}, ${b[at]}`);
          }
        });
      }
      checkByFiniteDifferences(c, c.backward, x, dy);
    }
  } finally {
    const all = new Set([tx, ty, tdy, tg, tg2].flatMap((ts) => Object.values(ts)));
    for (const t of all) t.release();
  }
}
