/**
 * The MLP's gate and up projections and SwiGLU in one dispatch, for inference: h = silu(x · Wgᵀ) · (x · Wuᵀ), where
 * the unfused path is two matmuls and swigluForward (three dispatches, g and u written and read back). Nothing is
 * kept for a backward, so only a forward that keeps no activations (decoding, a KV-cache prefill, scoring) uses it.
 *
 * The kernel is main_reg's row block with two weights (shaders/gate_up_swiglu.wgsl), for few rows: decoding's one
 * token per sequence. Whether a call fuses is {@linkcode fuseGateUp}: off for more than {@linkcode FUSE_MAX_ROWS}
 * rows (there the product's arithmetic, not the dispatch count, is the cost, and the tiled matmuls win), off with
 * CRUCIBLE_FUSE=0, and otherwise the autotuner's choice where it tunes (both paths timed on the adapter per shape),
 * its seed elsewhere (measured on lavapipe: docs/speed.md).
 */
import source from "../../shaders/gate_up_swiglu.wgsl" with { type: "text" };
import type { Batch, Grid } from "../gpu/batch.ts";
import type { Gpu } from "../gpu/device.ts";
import { cachedKernel, type Kernel, kernel, type Shader } from "../gpu/pipeline.ts";
import { type DType, empty, fromHost, type Tensor } from "../gpu/tensor.ts";
import { timeRecorded } from "../gpu/timing.ts";
import { textHash, type TuneJob, tunerOf } from "../gpu/tuner.ts";
import { uniforms } from "../gpu/uniforms.ts";
import { matmul } from "./matmul.ts";
import { pow2Bucket } from "./matmul_variants.ts";
import { swigluForward } from "./swiglu.ts";
import { fixedSubgroupSize, laneSlots, slotLines } from "./wgsl.ts";

const SHADER: Shader = { name: "gate_up_swiglu", source };

const PARAMS = uniforms([["M", "u32"], ["N", "u32"], ["K", "u32"]] as const);

/** Columns per lane of both products: 2 · RM · 4 accumulators, as many as main_reg's RM x 8. */
const CN = 4;

/** Row blocks, smallest first: a call takes the first that holds its rows (the largest beyond). */
export const GATE_UP_ROWS: readonly number[] = [8, 16, 32, 64];

/** Rows past which nothing fuses: a row block kernel re-reads both weights per block of rows. */
export const FUSE_MAX_ROWS = 64;

/** CRUCIBLE_FUSE: `0`, `off` or `false` runs the unfused path everywhere; anything else lets the choice stand. */
export const FUSE_ENV = "CRUCIBLE_FUSE";

/**
 * The seeded choice where nothing is tuned, by adapter class. software: measured on lavapipe (docs/speed.md, the tiny
 * model's decode); hardware: fused, since decoding a small model is bound by the dispatches (about 15 µs each on the
 * H200), and the tuner times the unfused path against it per shape.
 */
export const GATE_UP_SEEDS: Readonly<Record<"software" | "hardware", "fused" | "unfused">> = {
  software: "fused",
  hardware: "fused",
};

/** What {@linkcode gateUpSwiglu} computes with. */
export interface GateUpArgs {
  /** [M, K] f32: the normed hidden states. */
  x: Tensor;
  /** [N, K] f32 or f16: the gate weight. */
  gate: Tensor;
  /** [N, K], the gate's dtype: the up weight. */
  up: Tensor;
  /** [M, N] f32, written (=). */
  h: Tensor;
  /** Rows per workgroup, one of {@linkcode GATE_UP_ROWS}; default the first that holds M (tests). */
  rows?: number;
}

/** Lanes per workgroup and whether they share x through subgroupBroadcast (as matmul.ts matmulRegLanes). */
function lanesOf(gpu: Gpu, rm: number): { lanes: number; share: boolean } {
  const size = fixedSubgroupSize(gpu);
  if (size > 0 && 2 * rm * CN * size * 4 <= gpu.limits.maxComputeWorkgroupStorageSize) {
    return { lanes: size, share: true };
  }
  return { lanes: 8, share: false };
}

/** The straight-line blocks of the shader's INIT, STEP and SAVE slots for RM x CN per lane. */
function blockSlots(rm: number, lanes: number, share: boolean): Record<string, string | number> {
  const init: string[] = [], step: string[] = [], save: string[] = [];
  if (share) {
    for (let q = 0; q < Math.ceil(rm / lanes); q++) {
      init.push(`let a${q} = min(row0 + ${q * lanes}u + lane, lastM) * p.K;`);
      step.push(`let x${q} = x[a${q} + k];`);
    }
  } else {
    for (let i = 0; i < rm; i++) init.push(`let a${i} = min(row0 + ${i}u, lastM) * p.K;`);
  }
  for (let j = 0; j < CN; j++) {
    init.push(`let b${j} = min(col0 + ${j * lanes}u + lane, lastN) * p.K;`);
    step.push(`let g${j} = f32(Wg[b${j} + k]);`, `let u${j} = f32(Wu[b${j} + k]);`);
  }
  for (let i = 0; i < rm; i++) {
    step.push(
      share ? `let r${i} = subgroupBroadcast(x${Math.floor(i / lanes)}, ${i % lanes}u);` : `let r${i} = x[a${i} + k];`,
    );
    for (let j = 0; j < CN; j++) {
      init.push(`var cg${i}_${j} = 0.0;`, `var cu${i}_${j} = 0.0;`);
      step.push(`cg${i}_${j} = fma(r${i}, g${j}, cg${i}_${j});`, `cu${i}_${j} = fma(r${i}, u${j}, cu${i}_${j});`);
    }
    const quad = (c: string) => [0, 1, 2, 3].map((d) => `${c}${i}_${d}`).join(", ");
    save.push(`stageG[${i}u * LANES + lane] = vec4<f32>(${quad("cg")});`);
    save.push(`stageU[${i}u * LANES + lane] = vec4<f32>(${quad("cu")});`);
  }
  return {
    RM: rm,
    CN,
    ...laneSlots(lanes, share),
    INIT: slotLines(init, 2),
    STEP: slotLines(step, 4),
    SAVE: slotLines(save, 2),
  };
}

/** The kernel for a row block and weight dtype (cached per device). */
function gateUpKernel(gpu: Gpu, rm: number, wt: DType): Kernel {
  return cachedKernel(gpu, `gate_up_swiglu ${rm} ${wt}`, () => {
    const { lanes, share } = lanesOf(gpu, rm);
    return kernel(gpu, SHADER, {
      params: PARAMS,
      template: { ...blockSlots(rm, lanes, share), ENABLE: wt === "f16" ? "enable f16;" : "", WT: wt },
      label: `gate_up_swiglu ${rm}x${CN} ${wt}`,
    });
  });
}

/** Workgroups of a call: [ceil(N / (lanes · CN)), ceil(M / RM)]. */
function gateUpGrid(gpu: Gpu, rm: number, M: number, N: number): Grid {
  return [Math.ceil(N / (lanesOf(gpu, rm).lanes * CN)), Math.ceil(M / rm)];
}

/**
 * Records h [M, N] = silu(x · gateᵀ) · (x · upᵀ) in one dispatch.
 *
 * @example
 * ```ts
 * gateUpSwiglu(batch, { x: n2, gate: w.stored("model.layers.0.mlp.gate_proj.weight") as Tensor, up, h });
 * ```
 */
export function gateUpSwiglu(batch: Batch, args: GateUpArgs): void {
  const { x, gate, up, h } = args;
  const [M, K] = x.shape.length === 2 ? x.shape : [-1, -1];
  const N = gate.shape[0];
  const same = (t: Tensor, shape: number[]) => t.shape.length === 2 && t.shape.every((d, i) => d === shape[i]);
  if (!same(gate, [N, K]) || !same(up, [N, K]) || !same(h, [M, N]) || x.dtype !== "f32" || h.dtype !== "f32") {
    throw new TypeError(
      `Gate/up/SwiGLU needs x [M, K] f32, gate and up [N, K], h [M, N] f32; got x [${x.shape}] ${x.dtype}, ` +
        `gate [${gate.shape}], up [${up.shape}], h [${h.shape}] ${h.dtype}`,
    );
  }
  if (gate.dtype !== up.dtype || (gate.dtype !== "f32" && gate.dtype !== "f16")) {
    throw new TypeError(`Gate/up/SwiGLU weights must both be f32 or both f16, got ${gate.dtype} and ${up.dtype}`);
  }
  const rm = args.rows ?? GATE_UP_ROWS.find((r) => M <= r) ?? GATE_UP_ROWS[GATE_UP_ROWS.length - 1];
  if (!GATE_UP_ROWS.includes(rm)) throw new RangeError(`Gate/up/SwiGLU rows per block must be one of ${GATE_UP_ROWS}`);
  const gpu = batch.gpu;
  batch.dispatch({
    kernel: gateUpKernel(gpu, rm, gate.dtype),
    buffers: [x, gate, up, h],
    params: { M, N, K },
    grid: gateUpGrid(gpu, rm, M, N),
    label: `gate_up_swiglu ${rm}x${CN}`,
  });
}

/** The unfused path: g and u by two matmuls, then swigluForward (three dispatches). */
export function gateUpSwigluUnfused(batch: Batch, args: Omit<GateUpArgs, "rows">): void {
  const { x, gate, up, h } = args;
  const shape = [x.shape[0], gate.shape[0]];
  const g = empty(batch.gpu, shape, "f32", "gate", true), u = empty(batch.gpu, shape, "f32", "up", true);
  matmul(batch, { a: x, b: gate, out: g, transB: true });
  matmul(batch, { a: x, b: up, out: u, transB: true });
  swigluForward(batch, g, u, h);
  g.release();
  u.release();
}

/** Whether CRUCIBLE_FUSE leaves fusion on (no variable, or any value but 0, off and false). */
export function fusionEnabled(): boolean {
  let v: string | undefined;
  try {
    v = Deno.env.get(FUSE_ENV);
  } catch {
    return true; // without --allow-env: the default
  }
  return !(v !== undefined && ["0", "off", "false"].includes(v.trim().toLowerCase()));
}

/** The autotuner's prefix of gate/up keys: the op and a hash of its shader and block generator. */
const TUNE_PREFIX = `gate_up_swiglu@${textHash(source + blockSlots.toString())}`;

/** A gate/up call's size: x [M, K], both weights [N, K] of dtype wt. */
export interface GateUpShape {
  M: number;
  N: number;
  K: number;
  wt: DType;
}

/**
 * Whether a gate/up/SwiGLU of this shape runs fused: never past {@linkcode FUSE_MAX_ROWS} rows or with
 * CRUCIBLE_FUSE=0; else the autotuner's choice where it has one, the adapter class's seed otherwise (a miss is
 * timed, fused against unfused, at the next sync point where the tuner tunes).
 */
export function fuseGateUp(gpu: Gpu, shape: GateUpShape): boolean {
  if (shape.M > FUSE_MAX_ROWS || !fusionEnabled()) return false;
  const seed = GATE_UP_SEEDS[gpu.software ? "software" : "hardware"];
  const tuner = tunerOf(gpu);
  if (!tuner.active) return seed === "fused";
  const key = `${TUNE_PREFIX} ${shape.wt} M${pow2Bucket(shape.M)} N${shape.N} K${shape.K}`;
  const tuned = tuner.choice(key);
  if (tuned === "fused" || tuned === "unfused") return tuned === "fused";
  if (shape.M > 0 && shape.N > 0 && shape.K > 0) tuner.request(key, () => gateUpJob(gpu, shape, seed));
  return seed === "fused";
}

/** Inputs of a call's shape (fixed values) and how to time both paths on them. */
function gateUpJob(gpu: Gpu, shape: GateUpShape, seed: string): TuneJob {
  const { M, N, K, wt } = shape;
  const filled = (rows: number, cols: number, dtype: DType) =>
    fromHost(gpu, Float32Array.from({ length: rows * cols }, (_, i) => ((i * 7919) % 1009) / 1009 - 0.5), [
      rows,
      cols,
    ], dtype);
  const x = filled(pow2Bucket(M), K, "f32"), gate = filled(N, K, wt), up = filled(N, K, wt);
  const h = empty(gpu, [pow2Bucket(M), N], "f32", "gate/up tuning output");
  const args = { x, gate, up, h };
  return {
    candidates: ["fused", "unfused"],
    seed,
    measure: (name) =>
      timeRecorded(gpu, (b) => name === "fused" ? gateUpSwiglu(b, args) : gateUpSwigluUnfused(b, args)),
    done: () => [x, gate, up, h].forEach((t) => t.release()),
  };
}
