// Batched matmul with epilogue: C[b] = alpha * op(A[b]) . op(B[b]) + bias + R[b] + beta * C[b]
//
// Bindings (group 0):
//   0 p     uniform     Params
//   1 A     read        [batch, M, K] row-major, or [batch, K, M] when TRANS_A; element type {{AT}}
//   2 B     read        [batch, K, N] row-major, or [batch, N, K] when TRANS_B; element type {{BT}}
//   3 C     read_write  [batch, M, N] f32; written (=), or accumulated when beta != 0
//   4 bias  read        [N] f32, added when hasBias = 1 (bind any buffer otherwise)
//   5 R     read        [batch, M, N] f32 residual, added when hasResidual = 1 (bind any buffer otherwise)
// Batch b starts at b * strideA / strideB / strideC / strideR elements (0 broadcasts one matrix to every batch).
//
// Two entry points share the epilogue:
//   main_reg   each invocation owns a TM x TN block of C and reads A and B straight from storage. No shared
//              memory: the best shape on CPU rasterisers (lavapipe), where FMAs per loaded element is what pays.
//              Workgroup WX x WY; grid [ceil(N / (WX*TN)), ceil(M / (WY*TM)), batch].
//   main_tile  the workgroup stages BM x BK tiles of A and BK x BN tiles of B in workgroup memory
//              (BM = WY*TM, BN = WX*TN); the usual shape on real GPUs. Same grid formula.
// Any M, N, K: edge rows and columns are clamped on load and masked on store.
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
}

@group(0) @binding(0) var<uniform> p: Params;
@group(0) @binding(1) var<storage, read> A: array<{{AT}}>;
@group(0) @binding(2) var<storage, read> B: array<{{BT}}>;
@group(0) @binding(3) var<storage, read_write> C: array<f32>;
@group(0) @binding(4) var<storage, read> bias: array<f32>;
@group(0) @binding(5) var<storage, read> R: array<f32>;

override TRANS_A: bool = false;
override TRANS_B: bool = false;

const TM = {{TM}}u;
const TN = {{TN}}u;
const WX = {{WX}}u;
const WY = {{WY}}u;
const BK = {{BK}}u;
const BM = WY * TM;
const BN = WX * TN;

fn loadA(base: u32, m: u32, k: u32) -> f32 {
  if (TRANS_A) {
    return f32(A[base + k * p.M + m]);
  }
  return f32(A[base + m * p.K + k]);
}

fn loadB(base: u32, k: u32, n: u32) -> f32 {
  if (TRANS_B) {
    return f32(B[base + n * p.K + k]);
  }
  return f32(B[base + k * p.N + n]);
}

fn store(batch: u32, row0: u32, col0: u32, acc: ptr<function, array<f32, TM * TN>>) {
  let baseC = batch * p.strideC;
  let baseR = batch * p.strideR;
  for (var i = 0u; i < TM; i++) {
    let m = row0 + i;
    if (m >= p.M) {
      break;
    }
    for (var j = 0u; j < TN; j++) {
      let n = col0 + j;
      if (n >= p.N) {
        break;
      }
      let at = m * p.N + n;
      var v = p.alpha * (*acc)[i * TN + j];
      if (p.hasBias != 0u) {
        v += bias[n];
      }
      if (p.hasResidual != 0u) {
        v += R[baseR + at];
      }
      if (p.beta != 0.0) {
        v += p.beta * C[baseC + at];
      }
      C[baseC + at] = v;
    }
  }
}

@compute @workgroup_size(WX, WY)
fn main_reg(@builtin(workgroup_id) wg: vec3u, @builtin(local_invocation_id) lid: vec3u) {
  let row0 = (wg.y * WY + lid.y) * TM;
  let col0 = (wg.x * WX + lid.x) * TN;
  if (row0 >= p.M || col0 >= p.N) {
    return;
  }
  let baseA = wg.z * p.strideA;
  let baseB = wg.z * p.strideB;
  var rows: array<u32, TM>;
  var cols: array<u32, TN>;
  for (var i = 0u; i < TM; i++) {
    rows[i] = min(row0 + i, p.M - 1u);
  }
  for (var j = 0u; j < TN; j++) {
    cols[j] = min(col0 + j, p.N - 1u);
  }
  var acc: array<f32, TM * TN>;
  for (var k = 0u; k < p.K; k++) {
    var a: array<f32, TM>;
    var b: array<f32, TN>;
    for (var i = 0u; i < TM; i++) {
      a[i] = loadA(baseA, rows[i], k);
    }
    for (var j = 0u; j < TN; j++) {
      b[j] = loadB(baseB, k, cols[j]);
    }
    for (var i = 0u; i < TM; i++) {
      for (var j = 0u; j < TN; j++) {
        acc[i * TN + j] = fma(a[i], b[j], acc[i * TN + j]);
      }
    }
  }
  store(wg.z, row0, col0, &acc);
}

var<workgroup> tileA: array<f32, BM * BK>;
var<workgroup> tileB: array<f32, BK * BN>;

@compute @workgroup_size(WX, WY)
fn main_tile(@builtin(workgroup_id) wg: vec3u, @builtin(local_invocation_id) lid: vec3u,
             @builtin(local_invocation_index) li: u32) {
  let baseA = wg.z * p.strideA;
  let baseB = wg.z * p.strideB;
  let tileRow = wg.y * BM;
  let tileCol = wg.x * BN;
  var acc: array<f32, TM * TN>;
  for (var k0 = 0u; k0 < p.K; k0 += BK) {
    // Cooperative loads, zero outside the matrix; WX*WY invocations stride over the tiles, consecutive
    // invocations along the contiguous dimension of the stored matrix.
    for (var e = li; e < BM * BK; e += WX * WY) {
      let r = select(e / BK, e % BM, TRANS_A);
      let c = select(e % BK, e / BM, TRANS_A);
      var v = 0.0;
      if (tileRow + r < p.M && k0 + c < p.K) {
        v = loadA(baseA, tileRow + r, k0 + c);
      }
      tileA[r * BK + c] = v;
    }
    for (var e = li; e < BK * BN; e += WX * WY) {
      let r = select(e / BN, e % BK, TRANS_B);
      let c = select(e % BN, e / BK, TRANS_B);
      var v = 0.0;
      if (k0 + r < p.K && tileCol + c < p.N) {
        v = loadB(baseB, k0 + r, tileCol + c);
      }
      tileB[r * BN + c] = v;
    }
    workgroupBarrier();
    for (var k = 0u; k < BK; k++) {
      var a: array<f32, TM>;
      var b: array<f32, TN>;
      for (var i = 0u; i < TM; i++) {
        a[i] = tileA[(lid.y * TM + i) * BK + k];
      }
      for (var j = 0u; j < TN; j++) {
        b[j] = tileB[k * BN + lid.x * TN + j];
      }
      for (var i = 0u; i < TM; i++) {
        for (var j = 0u; j < TN; j++) {
          acc[i * TN + j] = fma(a[i], b[j], acc[i * TN + j]);
        }
      }
    }
    workgroupBarrier();
  }
  let row0 = tileRow + lid.y * TM;
  let col0 = tileCol + lid.x * TN;
  if (row0 < p.M && col0 < p.N) {
    store(wg.z, row0, col0, &acc);
  }
}
