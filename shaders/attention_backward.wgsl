// Grouped-query attention, backward (FlashAttention-2 style: P is recomputed from q, k and the saved lse).
//
// With s_ij = scale · q_i · k_j, P_ij = exp(s_ij − lse_i) over the keys kvStart[i] <= j < kvEnd[i] of kv head
// h / (H / KV), and δ_i = rowsum(dO_i ⊙ o_i):
//   dP_ij = dO_i · v_j,  dS_ij = P_ij (dP_ij − δ_i),
//   dq_i = scale · Σ_j dS_ij k_j,  dk_j = scale · Σ_i dS_ij q_i,  dv_j = Σ_i P_ij dO_i,
// where dk and dv also sum over the H / KV query heads that share a kv head.
//
// Bindings (group 0), one layout shared by the two entry points:
//   0 p        uniform     Params
//   1 q        read        [T, H, D] f32
//   2 k        read        [S, KV, D] f32
//   3 v        read        [S, KV, D] f32
//   4 o        read        [T, H, D] f32 (forward output)
//   5 dO       read        [T, H, D] f32
//   6 lse      read        [T, H] f32 (forward log-sum-exp)
//   7 kvStart  read        [T] u32
//   8 kvEnd    read        [T] u32
//   9 qStart   read        [S] u32
//  10 qEnd     read        [S] u32
//  11 dq       read_write  [T, H, D] f32, written (=) by main_dq; 0 for an empty range
//  12 delta    read_write  [T, H] f32 = δ, written (=) by main_dq, read by main_dkv
//  13 dk       read_write  [S, KV, D] f32, written (=) by main_dkv
//  14 dv       read_write  [S, KV, D] f32, written (=) by main_dkv
//
// Entry points, a dq one then a dk/dv one, each in two shapes with the same sums in the same order:
//   main_dq        one invocation per (query row t, head h), iterating over its keys, k and v read straight from
//                  storage: bindings 1-8, 11, 12. Grid foldGrid(ceil(T · H / WG)).
//   main_dq_tile   a workgroup of WG query rows of one head stages K and V tiles of BK key rows in workgroup memory:
//                  same bindings. Grid foldGrid(ceil(T / WG) · H).
//   main_dkv       one invocation per (key row j, kv head), iterating over query rows qStart[j] <= i < qEnd[j] (a
//                  loose range is fine: each candidate is kept only if kvStart[i] <= j < kvEnd[i]) and over the
//                  heads of the kv head's group: bindings 1-3, 5-10, 12-14. Grid foldGrid(ceil(S · KV / WG)).
//   main_dkv_tile  a workgroup of WG key rows of one kv head stages tiles of BK (query row, head) pairs of q, dO,
//                  lse, δ and the query's range: same bindings. Grid foldGrid(ceil(S / WG) · KV).
// The tiles take 8 · BK · D + 16 · BK + 8 · WG bytes of workgroup memory.
//
// Every output row is owned by one invocation that sums in a fixed order: no atomics, deterministic. Workgroup WG;
// the linear workgroup index is wg.x + wg.y · nwg.x. D (head dim, <= 256), WG and BK are compile-time constants;
// any D, T, S.

struct Params {
  T: u32,
  H: u32,
  KV: u32,
  S: u32,
  scale: f32,
}

@group(0) @binding(0) var<uniform> p: Params;
@group(0) @binding(1) var<storage, read> q: array<f32>;
@group(0) @binding(2) var<storage, read> k: array<f32>;
@group(0) @binding(3) var<storage, read> v: array<f32>;
@group(0) @binding(4) var<storage, read> o: array<f32>;
@group(0) @binding(5) var<storage, read> dO: array<f32>;
@group(0) @binding(6) var<storage, read> lse: array<f32>;
@group(0) @binding(7) var<storage, read> kvStart: array<u32>;
@group(0) @binding(8) var<storage, read> kvEnd: array<u32>;
@group(0) @binding(9) var<storage, read> qStart: array<u32>;
@group(0) @binding(10) var<storage, read> qEnd: array<u32>;
@group(0) @binding(11) var<storage, read_write> dq: array<f32>;
@group(0) @binding(12) var<storage, read_write> delta: array<f32>;
@group(0) @binding(13) var<storage, read_write> dk: array<f32>;
@group(0) @binding(14) var<storage, read_write> dv: array<f32>;

const D = {{D}}u;
const WG = {{WG}}u;

fn linearId(wg: vec3u, nwg: vec3u, li: u32) -> u32 {
  return (wg.y * nwg.x + wg.x) * WG + li;
}

@compute @workgroup_size(WG)
fn main_dq(@builtin(workgroup_id) wg: vec3u, @builtin(num_workgroups) nwg: vec3u,
           @builtin(local_invocation_index) li: u32) {
  let row = linearId(wg, nwg, li);
  if (row >= p.T * p.H) {
    return;
  }
  let t = row / p.H;
  let kvh = (row % p.H) / (p.H / p.KV);
  var qs: array<f32, D>;
  var g: array<f32, D>;
  var acc: array<f32, D>;
  var dlt = 0.0;
  for (var d = 0u; d < D; d++) {
    qs[d] = q[row * D + d] * p.scale;
    g[d] = dO[row * D + d];
    dlt = fma(g[d], o[row * D + d], dlt);
  }
  let m = lse[row];
  let j1 = min(kvEnd[t], p.S);
  for (var j = kvStart[t]; j < j1; j++) {
    let base = (j * p.KV + kvh) * D;
    var s = 0.0;
    var dp = 0.0;
    for (var d = 0u; d < D; d++) {
      s = fma(qs[d], k[base + d], s);
      dp = fma(g[d], v[base + d], dp);
    }
    let ds = exp(s - m) * (dp - dlt);
    for (var d = 0u; d < D; d++) {
      acc[d] = fma(ds, k[base + d], acc[d]);
    }
  }
  for (var d = 0u; d < D; d++) {
    dq[row * D + d] = acc[d] * p.scale;
  }
  delta[row] = dlt;
}

@compute @workgroup_size(WG)
fn main_dkv(@builtin(workgroup_id) wg: vec3u, @builtin(num_workgroups) nwg: vec3u,
            @builtin(local_invocation_index) li: u32) {
  let id = linearId(wg, nwg, li);
  if (id >= p.S * p.KV) {
    return;
  }
  let j = id / p.KV;
  let kvh = id % p.KV;
  let group = p.H / p.KV;
  var ks: array<f32, D>;
  var vr: array<f32, D>;
  var gk: array<f32, D>;
  var gv: array<f32, D>;
  for (var d = 0u; d < D; d++) {
    ks[d] = k[id * D + d] * p.scale;
    vr[d] = v[id * D + d];
  }
  let i1 = min(qEnd[j], p.T);
  for (var i = qStart[j]; i < i1; i++) {
    if (j < kvStart[i] || j >= kvEnd[i]) {
      continue;
    }
    for (var h = kvh * group; h < (kvh + 1u) * group; h++) {
      let row = i * p.H + h;
      let base = row * D;
      var s = 0.0;
      var dp = 0.0;
      for (var d = 0u; d < D; d++) {
        s = fma(q[base + d], ks[d], s);
        dp = fma(dO[base + d], vr[d], dp);
      }
      let pr = exp(s - lse[row]);
      let ds = pr * (dp - delta[row]);
      for (var d = 0u; d < D; d++) {
        gv[d] = fma(pr, dO[base + d], gv[d]);
        gk[d] = fma(ds, q[base + d], gk[d]);
      }
    }
  }
  for (var d = 0u; d < D; d++) {
    dk[id * D + d] = gk[d] * p.scale;
    dv[id * D + d] = gv[d];
  }
}

// Tiled entry points: shared tiles and the block's union of ranges.
const BK = {{BK}}u;
var<workgroup> aTile: array<f32, BK * D>;
var<workgroup> bTile: array<f32, BK * D>;
var<workgroup> lseTile: array<f32, BK>;
var<workgroup> deltaTile: array<f32, BK>;
var<workgroup> startTile: array<u32, BK>;
var<workgroup> endTile: array<u32, BK>;
var<workgroup> rangeLo: array<u32, WG>;
var<workgroup> rangeHi: array<u32, WG>;
var<workgroup> blockLo: u32;
var<workgroup> blockHi: u32;

// The union [lo, hi) of the invocations' ranges [a, b), empty ones ignored (lo >= hi when all are empty).
// Called by the whole workgroup; the result is uniform.
fn blockRange(li: u32, a: u32, b: u32) -> vec2u {
  rangeLo[li] = select(0xffffffffu, a, a < b);
  rangeHi[li] = select(0u, b, a < b);
  workgroupBarrier();
  if (li == 0u) {
    var lo = 0xffffffffu;
    var hi = 0u;
    for (var i = 0u; i < WG; i++) {
      lo = min(lo, rangeLo[i]);
      hi = max(hi, rangeHi[i]);
    }
    blockLo = lo;
    blockHi = hi;
  }
  return vec2u(workgroupUniformLoad(&blockLo), workgroupUniformLoad(&blockHi));
}

// Workgroup w = wg.x + wg.y · nwg.x handles query rows [(w / H) · WG, +WG) of head w % H; grid
// foldGrid(ceil(T / WG) · H). aTile holds K rows, bTile V rows.
@compute @workgroup_size(WG)
fn main_dq_tile(@builtin(workgroup_id) wg: vec3u, @builtin(num_workgroups) nwg: vec3u,
                @builtin(local_invocation_index) li: u32) {
  let w = wg.y * nwg.x + wg.x;
  let h = w % p.H;
  let t = (w / p.H) * WG + li;
  let kvh = h / (p.H / p.KV);
  let valid = t < p.T;
  let row = t * p.H + h;
  var j0 = 0u;
  var j1 = 0u;
  var qs: array<f32, D>;
  var g: array<f32, D>;
  var dlt = 0.0;
  var m = 0.0;
  if (valid) {
    j0 = kvStart[t];
    j1 = min(kvEnd[t], p.S);
    for (var d = 0u; d < D; d++) {
      qs[d] = q[row * D + d] * p.scale;
      g[d] = dO[row * D + d];
      dlt = fma(g[d], o[row * D + d], dlt);
    }
    m = lse[row];
  }
  let range = blockRange(li, j0, j1);
  var acc: array<f32, D>;
  for (var jt = range.x; jt < range.y; jt += BK) {
    let n = min(BK, range.y - jt);
    for (var e = li; e < n * D; e += WG) {
      let at = ((jt + e / D) * p.KV + kvh) * D + e % D;
      aTile[e] = k[at];
      bTile[e] = v[at];
    }
    workgroupBarrier();
    for (var jj = 0u; jj < n; jj++) {
      let j = jt + jj;
      if (j < j0 || j >= j1) {
        continue;
      }
      var s = 0.0;
      var dp = 0.0;
      for (var d = 0u; d < D; d++) {
        s = fma(qs[d], aTile[jj * D + d], s);
        dp = fma(g[d], bTile[jj * D + d], dp);
      }
      let ds = exp(s - m) * (dp - dlt);
      for (var d = 0u; d < D; d++) {
        acc[d] = fma(ds, aTile[jj * D + d], acc[d]);
      }
    }
    workgroupBarrier();
  }
  if (valid) {
    for (var d = 0u; d < D; d++) {
      dq[row * D + d] = acc[d] * p.scale;
    }
    delta[row] = dlt;
  }
}

// Workgroup w = wg.x + wg.y · nwg.x handles key rows [(w / KV) · WG, +WG) of kv head w % KV; grid
// foldGrid(ceil(S / WG) · KV). The query rows of the block's union range and the heads of the group are walked as
// pairs f = i · G + hh (G = H / KV), BK pairs per tile: aTile holds their q rows, bTile their dO rows.
@compute @workgroup_size(WG)
fn main_dkv_tile(@builtin(workgroup_id) wg: vec3u, @builtin(num_workgroups) nwg: vec3u,
                 @builtin(local_invocation_index) li: u32) {
  let w = wg.y * nwg.x + wg.x;
  let kvh = w % p.KV;
  let j = (w / p.KV) * WG + li;
  let group = p.H / p.KV;
  let valid = j < p.S;
  let id = j * p.KV + kvh;
  var i0 = 0u;
  var i1 = 0u;
  var ks: array<f32, D>;
  var vr: array<f32, D>;
  if (valid) {
    i0 = qStart[j];
    i1 = min(qEnd[j], p.T);
    for (var d = 0u; d < D; d++) {
      ks[d] = k[id * D + d] * p.scale;
      vr[d] = v[id * D + d];
    }
  }
  let range = blockRange(li, i0, i1);
  var gk: array<f32, D>;
  var gv: array<f32, D>;
  for (var ft = range.x * group; ft < range.y * group; ft += BK) {
    let n = min(BK, range.y * group - ft);
    for (var e = li; e < n * D; e += WG) {
      let f = ft + e / D;
      let at = ((f / group) * p.H + kvh * group + f % group) * D + e % D;
      aTile[e] = q[at];
      bTile[e] = dO[at];
    }
    for (var e = li; e < n; e += WG) {
      let f = ft + e;
      let i = f / group;
      let r = i * p.H + kvh * group + f % group;
      lseTile[e] = lse[r];
      deltaTile[e] = delta[r];
      startTile[e] = kvStart[i];
      endTile[e] = kvEnd[i];
    }
    workgroupBarrier();
    for (var ff = 0u; ff < n; ff++) {
      let i = (ft + ff) / group;
      if (i < i0 || i >= i1 || j < startTile[ff] || j >= endTile[ff]) {
        continue;
      }
      var s = 0.0;
      var dp = 0.0;
      for (var d = 0u; d < D; d++) {
        s = fma(aTile[ff * D + d], ks[d], s);
        dp = fma(bTile[ff * D + d], vr[d], dp);
      }
      let pr = exp(s - lseTile[ff]);
      let ds = pr * (dp - deltaTile[ff]);
      for (var d = 0u; d < D; d++) {
        gv[d] = fma(pr, bTile[ff * D + d], gv[d]);
        gk[d] = fma(ds, aTile[ff * D + d], gk[d]);
      }
    }
    workgroupBarrier();
  }
  if (valid) {
    for (var d = 0u; d < D; d++) {
      dk[id * D + d] = gk[d] * p.scale;
      dv[id * D + d] = gv[d];
    }
  }
}
