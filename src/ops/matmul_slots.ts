/**
 * The straight-line WGSL of each matmul kind's block (shaders/matmul_forward.wgsl's `{{..._INIT}}`, `{{..._STEP}}`,
 * `{{..._SAVE}}` slots): Deno compiles every shader with forced loop bounding and index clamping, so register
 * blocks written as loops over arrays neither unroll nor stay in registers (docs/kernel-timings.md). One function
 * per kind; {@linkcode matmulSlots} fills a pipeline's template with its own kind's slots and idle values for the
 * others.
 */
import { laneSlots, slotLines } from "./wgsl.ts";
import type { MatmulVariant } from "./matmul_variants.ts";

/** Template values of the entries a kernel does not use: the smallest valid shapes and empty slots. */
const IDLE: Record<string, string | number> = {
  RM: 1,
  CN: 4,
  ...laneSlots(1, false),
  REG_INIT: "",
  REG_STEP: "",
  REG_SAVE: "",
  TM: 4,
  TN: 4,
  WX: 1,
  WY: 1,
  BK: 4,
  TILE_INIT: "",
  TILE_STEP: "",
  TILE_SAVE: "",
  GM: 1,
  GX: 1,
  GY: 1,
  GEMV_INIT: "",
  GEMV_STEP: "",
  GEMV_SAVE: "",
  WTM: 4,
  WTN: 4,
  WWX: 1,
  WWY: 1,
  WBK: 4,
  WG_INIT: "",
  WG_STORE: "",
  WG_LOAD: "",
  WG_STEP: "",
  WG_SAVE: "",
  PART: "fn writePart(i: u32, v: f32) {}\nfn readPart(i: u32) -> f32 {\n  return 0.0;\n}",
};

/** The split's partial sums (binding 6) and their accessors, in the pipelines of main_wg and main_reduce only. */
export const PART_BINDING = "@group(0) @binding(6) var<storage, read_write> part: array<f32>;\n" +
  "fn writePart(i: u32, v: f32) {\n  part[i] = v;\n}\nfn readPart(i: u32) -> f32 {\n  return part[i];\n}";

/** main_reg: RM x CN accumulators per invocation; A rows loaded once per subgroup and broadcast when `share`. */
function regSlots(rm: number, cn: number, lanes: number, share: boolean): Record<string, string | number> {
  const init: string[] = [];
  const step: string[] = [];
  const save: string[] = [];
  if (share) {
    for (let q = 0; q < Math.ceil(rm / lanes); q++) {
      init.push(`let a${q} = baseA + offA(min(row0 + ${q * lanes}u + lane, lastM), 0u);`);
      step.push(`let x${q} = f32(A[a${q} + ka]);`);
    }
  } else {
    for (let i = 0; i < rm; i++) init.push(`let a${i} = baseA + offA(min(row0 + ${i}u, lastM), 0u);`);
  }
  for (let j = 0; j < cn; j++) {
    init.push(`let b${j} = baseB + offB(0u, min(col0 + ${j * lanes}u + lane, lastN));`);
    step.push(`let y${j} = f32(B[b${j} + kb]);`);
  }
  for (let i = 0; i < rm; i++) {
    step.push(
      share
        ? `let r${i} = subgroupBroadcast(x${Math.floor(i / lanes)}, ${i % lanes}u);`
        : `let r${i} = f32(A[a${i} + ka]);`,
    );
    for (let j = 0; j < cn; j++) {
      init.push(`var c${i}_${j} = 0.0;`);
      step.push(`c${i}_${j} = fma(r${i}, y${j}, c${i}_${j});`);
    }
    for (let j = 0; j < cn; j += 4) {
      const quad = [0, 1, 2, 3].map((d) => `c${i}_${j + d}`).join(", ");
      save.push(`stage[${(i * cn + j) / 4}u * LANES + lane] = vec4<f32>(${quad});`);
    }
  }
  return {
    RM: rm,
    CN: cn,
    ...laneSlots(lanes, share),
    REG_INIT: slotLines(init, 2),
    REG_STEP: slotLines(step, 4),
    REG_SAVE: slotLines(save, 2),
  };
}

/** main_tile: TM x TN outputs per invocation as vec4 accumulators c{row}_{quad}, fed from vec4 tile reads. */
function tileSlots(v: MatmulVariant): Record<string, string | number> {
  const init: string[] = [];
  const step: string[] = [];
  const save: string[] = [];
  const quads = v.tn / 4;
  for (let p = 0; p < v.tm / 4; p++) step.push(`let a${p} = tileA[ra + ${p * v.wy}u];`);
  for (let q = 0; q < quads; q++) step.push(`let b${q} = tileB[rb + ${q * v.wx}u];`);
  for (let i = 0; i < v.tm; i++) {
    for (let q = 0; q < quads; q++) {
      init.push(`var c${i}_${q} = vec4<f32>();`);
      step.push(`c${i}_${q} = fma(vec4<f32>(a${i >> 2}[${i & 3}]), b${q}, c${i}_${q});`);
      save.push(`acc[${i * quads + q}] = c${i}_${q};`);
    }
  }
  return {
    TM: v.tm,
    TN: v.tn,
    WX: v.wx,
    WY: v.wy,
    BK: v.bk,
    TILE_INIT: slotLines(init, 2),
    TILE_STEP: slotLines(step, 6),
    TILE_SAVE: slotLines(save, 2),
  };
}

/** main_gemv: GM rows per workgroup, one partial dot product per row and invocation. */
function gemvSlots(v: MatmulVariant): Record<string, string | number> {
  const init: string[] = [];
  const step: string[] = [];
  const save: string[] = [];
  for (let g = 0; g < v.tm; g++) {
    init.push(`let a${g} = baseA + offA(min(row0 + ${g}u, lastM), 0u);`, `var c${g} = 0.0;`);
    step.push(`c${g} = fma(f32(A[a${g} + ka]), b, c${g});`);
    save.push(`partial[${g}u * GX * GY + li] = c${g};`);
  }
  return {
    GM: v.tm,
    GX: v.wx,
    GY: v.wy,
    GEMV_INIT: slotLines(init, 2),
    GEMV_STEP: slotLines(step, 4),
    GEMV_SAVE: slotLines(save, 2),
  };
}

/**
 * main_wg: each invocation's share of the two tiles (element e = li + i · threads of each, its tile position, its
 * clamped storage offset at k = 0 and its slot in the padded k-major tile), held one step ahead in registers ra{i}
 * and rb{j}, and the BK steps of the block product written out.
 */
function wgSlots(v: MatmulVariant): Record<string, string | number> {
  const threads = v.wx * v.wy, bm = v.wy * v.tm, bn = v.wx * v.tn, padA = bm + 4, padB = bn + 4;
  const init: string[] = [], store: string[] = [], load: string[] = [], step: string[] = [], save: string[] = [];
  const fetchA = (i: number, k: string) =>
    `select(0.0, f32(A[gA${i} + min(${k} + kA${i}, lastK) * sA]), okA${i} && ${k} + kA${i} < kEnd)`;
  const fetchB = (j: number, k: string) =>
    `select(0.0, f32(B[gB${j} + min(${k} + kB${j}, lastK) * sB]), okB${j} && ${k} + kB${j} < kEnd)`;
  for (let i = 0; i < (bm * v.bk) / threads; i++) {
    init.push(
      `let eA${i} = li + ${i * threads}u;`,
      `let mA${i} = select(eA${i} / WBK, eA${i} % WBM, TRANS_A);`,
      `let kA${i} = select(eA${i} % WBK, eA${i} / WBM, TRANS_A);`,
      `let okA${i} = tileRow + mA${i} < p.M;`,
      `let gA${i} = baseA + offA(min(tileRow + mA${i}, lastM), 0u);`,
      `let wA${i} = (kA${i} * PAD_A + mA${i}) / 4u;`,
      `var ra${i} = ${fetchA(i, "kStart")};`,
    );
    store.push(`wgA[wA${i}][mA${i} % 4u] = ra${i};`);
    load.push(`ra${i} = ${fetchA(i, "kn")};`);
  }
  for (let j = 0; j < (bn * v.bk) / threads; j++) {
    init.push(
      `let eB${j} = li + ${j * threads}u;`,
      `let nB${j} = select(eB${j} % WBN, eB${j} / WBK, TRANS_B);`,
      `let kB${j} = select(eB${j} / WBN, eB${j} % WBK, TRANS_B);`,
      `let okB${j} = tileCol + nB${j} < p.N;`,
      `let gB${j} = baseB + offB(0u, min(tileCol + nB${j}, lastN));`,
      `let wB${j} = (kB${j} * PAD_B + nB${j}) / 4u;`,
      `var rb${j} = ${fetchB(j, "kStart")};`,
    );
    store.push(`wgB[wB${j}][nB${j} % 4u] = rb${j};`);
    load.push(`rb${j} = ${fetchB(j, "kn")};`);
  }
  const quads = v.tn / 4;
  for (let i = 0; i < v.tm; i++) {
    for (let q = 0; q < quads; q++) {
      init.push(`var c${i}_${q} = vec4<f32>();`);
      save.push(`acc[${i * quads + q}] = c${i}_${q};`);
    }
  }
  for (let k = 0; k < v.bk; k++) {
    step.push("{");
    for (let p = 0; p < v.tm / 4; p++) step.push(`  let a${p} = wgA[${(k * padA) / 4 + p * v.wy}u + lid.y];`);
    for (let q = 0; q < quads; q++) step.push(`  let b${q} = wgB[${(k * padB) / 4 + q * v.wx}u + lid.x];`);
    for (let i = 0; i < v.tm; i++) {
      for (let q = 0; q < quads; q++) {
        step.push(`  c${i}_${q} = fma(vec4<f32>(a${i >> 2}[${i & 3}]), b${q}, c${i}_${q});`);
      }
    }
    step.push("}");
  }
  return {
    WTM: v.tm,
    WTN: v.tn,
    WWX: v.wx,
    WWY: v.wy,
    WBK: v.bk,
    WG_INIT: slotLines(init, 2),
    WG_STORE: slotLines(store, 4),
    WG_LOAD: slotLines(load, 4),
    WG_STEP: slotLines(step, 4),
    WG_SAVE: slotLines(save, 2),
    PART: PART_BINDING,
  };
}

/**
 * The template values of a pipeline of variant `v`: its kind's slots, and the idle values of the other entries.
 * `lanes` and `share` are the reg kind's invocations and subgroup sharing (matmulRegLanes).
 */
export function matmulSlots(v: MatmulVariant, lanes: number, share: boolean): Record<string, string | number> {
  const own = v.kind === "reg"
    ? regSlots(v.tm, v.tn, lanes, share)
    : v.kind === "tile"
    ? tileSlots(v)
    : v.kind === "wg"
    ? wgSlots(v)
    : gemvSlots(v);
  return { ...IDLE, ...own };
}

/** The generators' own text, hashed into the autotuner's keys: a change to any of them makes old timings stale. */
export const MATMUL_SLOTS_TEXT: string = [regSlots, tileSlots, gemvSlots, wgSlots].map((f) => f.toString()).join("\n");

/** The template values of a pipeline whose entry point uses no block (main_reduce). */
export const MATMUL_IDLE: Readonly<Record<string, string | number>> = IDLE;
