// Batched matmul with epilogue: C[b] = alpha * op(A[b]) . op(B[b]) + bias + R[b] + beta * C[b], f32 accumulation.
//
// Bindings (group 0):
//   0 p     uniform     Params
//   1 A     read        [batch, M, K] row-major, or [batch, K, M] when TRANS_A; element type {{AT}} (f32 or f16)
//   2 B     read        [batch, K, N] row-major, or [batch, N, K] when TRANS_B; element type {{BT}} (f32 or f16)
//   3 C     read_write  [batch, M, N] f32; written (=), or accumulated (+= beta * C) when beta != 0
//   4 bias  read        [N] f32, added when hasBias = 1 (bind any buffer otherwise)
//   5 R     read        [batch, M, N] f32 residual, added when hasResidual = 1 (bind any buffer otherwise)
//   6 part  read_write  [batch, splits, M, N] f32 partial sums of main_wg split over K: written (=) by main_wg when
//                       splits > 1, read by main_reduce (bind any buffer otherwise)
// Batch b starts at b * strideA / strideB / strideC / strideR elements (0 broadcasts one matrix to every batch).
// A's stored rows are lda elements apart and op(A) starts colA elements into them; C, R and bias likewise ldc and
// colC: a column block of a wider matrix (a weight split by rows, src/gpu/split.ts). A whole matrix has lda = K
// (M when TRANS_A), ldc = N and both offsets 0.
// Any M, N, K >= 0: loads clamp or zero-fill outside the matrices and the epilogue masks every store.
//
// Four entry points share the epilogue (and main_reduce finishes main_wg's split); one pipeline compiles one of them. The host fills the {{..._INIT}},
// {{..._STEP}} and {{..._SAVE}} slots of that entry with straight-line code for its block shape and leaves the other
// entries' slots empty. Loops over register blocks are not an option in Deno: every shader is compiled with forced
// loop bounding and index clamping, so Mesa neither unrolls them nor keeps the arrays in registers (a block written
// as loops ran several times slower and compiled several times longer: docs/kernel-timings.md), and
// subgroupBroadcast needs a constant lane.
//
//   main_reg   CPU rasterisers (lavapipe), where every load costs a loop over the SIMD lanes (about 20 cycles per lane
//              and element) and an FMA about 2: no shared memory, and as few loads per FMA as possible. A workgroup
//              is one subgroup of LANES invocations; each owns RM rows x CN columns of C (columns col0 + LANES * j +
//              lane). Per k, lane l loads A for rows l, l + LANES, ... and subgroupBroadcast hands each row's value
//              to every lane, so one load of A serves RM / LANES rows times LANES * CN columns; without fixed-size
//              subgroups every lane loads all RM rows itself. The block is staged through workgroup memory for the
//              epilogue (RM * CN * LANES floats: 16 KiB for 64 x 8 at 8 lanes). Workgroup LANES; grid
//              [ceil(N / (LANES * CN)), ceil(M / RM), batch]. With subgroupBroadcast the workgroup must be exactly
//              one subgroup (lane = subgroup_invocation_id). CN is a multiple of 4.
//   main_tile  real GPUs: the workgroup stages BK x BM tiles of op(A) and BK x BN tiles of op(B) (k-major, read as
//              vec4) in workgroup memory, loaded by consecutive invocations along each matrix's contiguous
//              dimension; each invocation owns TM x TN outputs in quads strided by 4 * WY rows and 4 * WX columns.
//              Workgroup WX x WY; grid [ceil(N / (WX * TN)), ceil(M / (WY * TM)), batch]. TM, TN multiples of 4.
//   main_gemv  decode (M = 1..16) on real GPUs: GM rows of C per workgroup of GX x GY invocations. With TRANS_B (B
//              stored [N, K], the x . W^T of a linear layer) the GY columns of a workgroup are each split over GX
//              invocations along K, then reduced in workgroup memory (GX a power of two); without, the GX columns
//              are each split over GY invocations. Grid [ceil(N / GY) if TRANS_B else ceil(N / GX), ceil(M / GM),
//              batch].
//   main_wg    real GPUs, the second generation of main_tile: a block of BM = WY * TM rows x BN = WX * TN columns
//              per workgroup of WX x WY invocations, K in steps of BK. Each invocation loads BM * BK / (WX * WY)
//              elements of op(A) and BK * BN / (WX * WY) of op(B) per step, consecutive invocations along each stored
//              matrix's contiguous dimension, into registers one step ahead (the next tile's global loads are in
//              flight while the current tile is multiplied); the tiles are stored k-major with rows padded by 4
//              floats (no bank conflicts when invocations write along k) and read back as vec4; the BK steps are
//              written out straight-line (slot WG_STEP), TM x TN accumulators per invocation as in main_tile. With
//              splits > 1 the K range is cut into chunks of kChunk (a multiple of BK), workgroup z = batch * splits
//              + chunk sums its chunk into part, and main_reduce adds the chunks in order and applies the epilogue.
//              Grid [ceil(N / BN), ceil(M / BM), batch * splits].
//   main_reduce  after main_wg with splits > 1: one invocation per element of C, 64 per workgroup; grid
//              foldGrid(ceil(batch * M * N / 64)).
{{ENABLE}}

struct Params {
  M: u32,
  N: u32,
  K: u32,
  strideA: u32,
  strideB: u32,
  strideC: u32,
  strideR: u32,
  alpha: f32,
  beta: f32,
  hasBias: u32,
  hasResidual: u32,
  lda: u32,
  colA: u32,
  ldc: u32,
  colC: u32,
  splits: u32,
  kChunk: u32,
  count: u32,
}

@group(0) @binding(0) var<uniform> p: Params;
@group(0) @binding(1) var<storage, read> A: array<{{AT}}>;
@group(0) @binding(2) var<storage, read> B: array<{{BT}}>;
@group(0) @binding(3) var<storage, read_write> C: array<f32>;
@group(0) @binding(4) var<storage, read> bias: array<f32>;
@group(0) @binding(5) var<storage, read> R: array<f32>;
// Binding 6 and its accessors: declared only in the pipelines of main_wg and main_reduce (template slot PART), so
// the other entries' pipelines bind what they always bound; elsewhere the accessors are stubs never called.
{{PART}}

override TRANS_A: bool = false;
override TRANS_B: bool = false;

// Element offset of op(A)[m, k] and op(B)[k, n] inside one batch matrix; each grows by strideKA / strideKB per k.
fn offA(m: u32, k: u32) -> u32 {
  return select(m * p.lda + k, k * p.lda + m, TRANS_A);
}

fn offB(k: u32, n: u32) -> u32 {
  return select(k * p.N + n, n * p.K + k, TRANS_B);
}

fn strideKA() -> u32 {
  return select(1u, p.lda, TRANS_A);
}

fn strideKB() -> u32 {
  return select(p.N, 1u, TRANS_B);
}

// C[batch, m, n] = alpha * v + bias[n] + R[batch, m, n] + beta * C[batch, m, n]; nothing outside the matrix.
fn epilogue(batch: u32, m: u32, n: u32, v: f32) {
  if (m >= p.M || n >= p.N) {
    return;
  }
  let at = m * p.ldc + p.colC + n;
  var out = p.alpha * v;
  if (p.hasBias != 0u) {
    out += bias[p.colC + n];
  }
  if (p.hasResidual != 0u) {
    out += R[batch * p.strideR + at];
  }
  if (p.beta != 0.0) {
    out += p.beta * C[batch * p.strideC + at];
  }
  C[batch * p.strideC + at] = out;
}

const RM = {{RM}}u;
const CN = {{CN}}u;
const LANES = {{LANES}}u;

var<workgroup> stage: array<vec4<f32>, RM * CN * LANES / 4u>;

@compute @workgroup_size(LANES)
fn main_reg(@builtin(workgroup_id) wg: vec3u, @builtin({{LANE_ID}}) lane: u32) {
  let row0 = wg.y * RM;
  let col0 = wg.x * LANES * CN;
  let baseA = wg.z * p.strideA + p.colA;
  let baseB = wg.z * p.strideB;
  let sA = strideKA();
  let sB = strideKB();
  let lastM = max(p.M, 1u) - 1u;
  let lastN = max(p.N, 1u) - 1u;
  // Per-lane element offsets at k = 0 (rows and columns clamped into the matrix) and the accumulators.
  {{REG_INIT}}
  for (var k = 0u; k < p.K; k++) {
    let ka = k * sA;
    let kb = k * sB;
    {{REG_STEP}}
  }
  // Through workgroup memory, where a runtime index is cheap, as vec4s (a quarter of the store code Mesa
  // compiles): each invocation reads back only what it wrote.
  {{REG_SAVE}}
  for (var i = 0u; i < RM; i++) {
    for (var j = 0u; j < CN; j++) {
      epilogue(wg.z, row0 + i, col0 + j * LANES + lane, stage[(i * CN + j) / 4u * LANES + lane][j % 4u]);
    }
  }
}

const TM = {{TM}}u;
const TN = {{TN}}u;
const WX = {{WX}}u;
const WY = {{WY}}u;
const BK = {{BK}}u;
const BM = WY * TM;
const BN = WX * TN;

var<workgroup> tileA: array<vec4<f32>, BK * BM / 4u>;
var<workgroup> tileB: array<vec4<f32>, BK * BN / 4u>;

@compute @workgroup_size(WX, WY)
fn main_tile(@builtin(workgroup_id) wg: vec3u, @builtin(local_invocation_id) lid: vec3u,
             @builtin(local_invocation_index) li: u32) {
  let baseA = wg.z * p.strideA + p.colA;
  let baseB = wg.z * p.strideB;
  let tileRow = wg.y * BM;
  let tileCol = wg.x * BN;
  // Accumulators: vec4 c{row}_{quad}.
  {{TILE_INIT}}
  for (var k0 = 0u; k0 < p.K; k0 += BK) {
    // Zero outside the matrices; consecutive invocations read consecutive elements of the stored matrix.
    for (var e = li; e < BM * BK; e += WX * WY) {
      let mm = select(e / BK, e % BM, TRANS_A);
      let kk = select(e % BK, e / BM, TRANS_A);
      var v = 0.0;
      if (tileRow + mm < p.M && k0 + kk < p.K) {
        v = f32(A[baseA + offA(tileRow + mm, k0 + kk)]);
      }
      tileA[(kk * BM + mm) / 4u][mm % 4u] = v;
    }
    for (var e = li; e < BK * BN; e += WX * WY) {
      let nn = select(e % BN, e / BK, TRANS_B);
      let kk = select(e / BN, e % BK, TRANS_B);
      var v = 0.0;
      if (k0 + kk < p.K && tileCol + nn < p.N) {
        v = f32(B[baseB + offB(k0 + kk, tileCol + nn)]);
      }
      tileB[(kk * BN + nn) / 4u][nn % 4u] = v;
    }
    workgroupBarrier();
    for (var k = 0u; k < BK; k++) {
      let ra = (k * BM) / 4u + lid.y;
      let rb = (k * BN) / 4u + lid.x;
      {{TILE_STEP}}
    }
    workgroupBarrier();
  }
  var acc: array<vec4<f32>, TM * TN / 4u>;
  {{TILE_SAVE}}
  for (var i = 0u; i < TM; i++) {
    let m = tileRow + (i / 4u) * 4u * WY + lid.y * 4u + i % 4u;
    for (var q = 0u; q < TN / 4u; q++) {
      let n = tileCol + q * 4u * WX + lid.x * 4u;
      let v = acc[i * (TN / 4u) + q];
      epilogue(wg.z, m, n, v.x);
      epilogue(wg.z, m, n + 1u, v.y);
      epilogue(wg.z, m, n + 2u, v.z);
      epilogue(wg.z, m, n + 3u, v.w);
    }
  }
}

const GM = {{GM}}u;
const GX = {{GX}}u;
const GY = {{GY}}u;

var<workgroup> partial: array<f32, GM * GX * GY>;

@compute @workgroup_size(GX, GY)
fn main_gemv(@builtin(workgroup_id) wg: vec3u, @builtin(local_invocation_id) lid: vec3u,
             @builtin(local_invocation_index) li: u32) {
  let n = select(wg.x * GX + lid.x, wg.x * GY + lid.y, TRANS_B);
  let kFirst = select(lid.y, lid.x, TRANS_B);
  let kStep = select(GY, GX, TRANS_B);
  let row0 = wg.y * GM;
  let baseA = wg.z * p.strideA + p.colA;
  let sA = strideKA();
  let sB = strideKB();
  let lastM = max(p.M, 1u) - 1u;
  let offN = wg.z * p.strideB + offB(0u, min(n, max(p.N, 1u) - 1u));
  // Per-row A offsets at k = 0 and accumulators c{row}.
  {{GEMV_INIT}}
  for (var k = kFirst; k < p.K; k += kStep) {
    let b = f32(B[offN + k * sB]);
    let ka = k * sA;
    {{GEMV_STEP}}
  }
  {{GEMV_SAVE}}
  workgroupBarrier();
  // Sum the partial dot products over the invocations that split K, then the first of them stores.
  if (TRANS_B) {
    for (var s = GX / 2u; s > 0u; s /= 2u) {
      if (lid.x < s) {
        for (var g = 0u; g < GM; g++) {
          partial[g * GX * GY + li] += partial[g * GX * GY + li + s];
        }
      }
      workgroupBarrier();
    }
    if (lid.x == 0u) {
      for (var g = 0u; g < GM; g++) {
        epilogue(wg.z, row0 + g, n, partial[g * GX * GY + li]);
      }
    }
  } else if (lid.y == 0u) {
    for (var g = 0u; g < GM; g++) {
      var sum = 0.0;
      for (var y = 0u; y < GY; y++) {
        sum += partial[g * GX * GY + y * GX + lid.x];
      }
      epilogue(wg.z, row0 + g, n, sum);
    }
  }
}

const WTM = {{WTM}}u;
const WTN = {{WTN}}u;
const WWX = {{WWX}}u;
const WWY = {{WWY}}u;
const WBK = {{WBK}}u;
const WBM = WWY * WTM;
const WBN = WWX * WTN;
// Row strides of the k-major tiles in floats: 4 past the block so that invocations writing along k hit distinct banks.
const PAD_A = WBM + 4u;
const PAD_B = WBN + 4u;

var<workgroup> wgA: array<vec4<f32>, WBK * PAD_A / 4u>;
var<workgroup> wgB: array<vec4<f32>, WBK * PAD_B / 4u>;

@compute @workgroup_size(WWX, WWY)
fn main_wg(@builtin(workgroup_id) wg: vec3u, @builtin(local_invocation_id) lid: vec3u,
           @builtin(local_invocation_index) li: u32) {
  let batch = wg.z / p.splits;
  let chunk = wg.z % p.splits;
  let baseA = batch * p.strideA + p.colA;
  let baseB = batch * p.strideB;
  let tileRow = wg.y * WBM;
  let tileCol = wg.x * WBN;
  let kStart = min(chunk * p.kChunk, p.K);
  let kEnd = min(kStart + p.kChunk, p.K);
  let sA = strideKA();
  let sB = strideKB();
  let lastM = max(p.M, 1u) - 1u;
  let lastN = max(p.N, 1u) - 1u;
  let lastK = max(p.K, 1u) - 1u;
  // Each loaded element's tile position and clamped storage offset at k = 0, the first tile in registers, and the
  // accumulators (vec4 c{row}_{quad}).
  {{WG_INIT}}
  for (var k0 = kStart; k0 < kEnd; k0 += WBK) {
    {{WG_STORE}}
    workgroupBarrier();
    let kn = k0 + WBK;
    {{WG_LOAD}}
    {{WG_STEP}}
    workgroupBarrier();
  }
  var acc: array<vec4<f32>, WTM * WTN / 4u>;
  {{WG_SAVE}}
  for (var i = 0u; i < WTM; i++) {
    let m = tileRow + (i / 4u) * 4u * WWY + lid.y * 4u + i % 4u;
    for (var q = 0u; q < WTN / 4u; q++) {
      let n = tileCol + q * 4u * WWX + lid.x * 4u;
      let v = acc[i * (WTN / 4u) + q];
      if (p.splits == 1u) {
        epilogue(batch, m, n, v.x);
        epilogue(batch, m, n + 1u, v.y);
        epilogue(batch, m, n + 2u, v.z);
        epilogue(batch, m, n + 3u, v.w);
      } else if (m < p.M) {
        let at = (wg.z * p.M + m) * p.N + n;
        for (var c = 0u; c < 4u; c++) {
          if (n + c < p.N) {
            writePart(at + c, v[c]);
          }
        }
      }
    }
  }
}

@compute @workgroup_size(64)
fn main_reduce(@builtin(workgroup_id) wg: vec3u, @builtin(num_workgroups) nwg: vec3u,
               @builtin(local_invocation_index) li: u32) {
  let id = (wg.y * nwg.x + wg.x) * 64u + li;
  let size = p.M * p.N;
  if (id >= size * p.count) {
    return;
  }
  let batch = id / size;
  let at = id % size;
  var sum = 0.0;
  for (var s = 0u; s < p.splits; s++) {
    sum += readPart((batch * p.splits + s) * size + at);
  }
  epilogue(batch, at / p.N, at % p.N, sum);
}
