// Grouped-query attention, backward (FlashAttention-2 style: P is recomputed from q, k and the saved lse).
//
// With s_ij = scale · q_i · k_j, P_ij = exp(s_ij − lse_i) over the keys kvStart[i] <= j < kvEnd[i] of kv head
// h / (H / KV), and δ_i = rowsum(dO_i ⊙ o_i):
//   dP_ij = dO_i · v_j,  dS_ij = P_ij (dP_ij − δ_i),
//   dq_i = scale · Σ_j dS_ij k_j,  dk_j = scale · Σ_i dS_ij q_i,  dv_j = Σ_i P_ij dO_i,
// where dk and dv also sum over the H / KV query heads that share a kv head.
//
// Bindings (group 0), one layout shared by all entry points; 0-5 are declared in attention_common.wgsl, as the
// forward's:
//   0 p        uniform     Params (the forward's; splits unused here)
//   1 q        read        [T, H, D] f32
//   2 k        read        [S, KV, D] f32
//   3 v        read        [S, KV, D] f32
//   4 kvStart  read        [T] u32
//   5 kvEnd    read        [T] u32
//   6 o        read        [T, H, D] f32 (forward output)
//   7 dO       read        [T, H, D] f32
//   8 lse      read        [T, H] f32 (forward log-sum-exp)
//   9 qStart   read        [S] u32
//  10 qEnd     read        [S] u32
//  11 dq       read_write  [T, H, D] f32, written (=) by the dq entry points; 0 for an empty range
//  12 delta    read_write  u32 [T, H, 4], written (=) by the dq entry points, read by the dk/dv ones: per query row
//                          (kvStart[t], kvEnd[t], bits of lse, bits of δ) (main_dq, main_dq_tile), or (kvStart[t],
//                          min(kvEnd[t], S), bits of lse · log2 e, bits of δ) (main_dq_reg), so that no dk/dv entry
//                          point binds kvStart, kvEnd or lse: each binds 9 storage buffers, a browser's 10 allowed
//  13 dk       read_write  [S, KV, D] f32, written (=) by the dk/dv entry points
//  14 dv       read_write  [S, KV, D] f32, written (=) by the dk/dv entry points
//
// Entry points, a dq one then the dk/dv one of the same shape (row, tile or reg):
//   main_dq        one invocation per (query row t, head h), iterating over its keys, k and v read straight from
//                  storage: bindings 1-8, 11, 12. Grid foldGrid(ceil(T · H / WG)).
//   main_dq_tile   a workgroup of WG query rows of one head stages K and V tiles of BK key rows in workgroup memory:
//                  same bindings. Grid foldGrid(ceil(T / WG) · H).
//   main_dq_reg    register blocks for CPU rasterisers: a workgroup is one subgroup of LANES lanes serving kv head
//                  w % KV (w = linear workgroup index); lane l owns the BQ query rows f = (w / KV) · LANES · BQ
//                  + r · LANES + l (r < BQ) of that kv head's T · G rows (G = H / KV, f = t · G + g is token t, head
//                  (w % KV) · G + g). The lanes walk the union of their rows' key ranges, BJ keys per step, jumping
//                  gaps; K and V rows are loaded once per step (one element per lane) and shared by
//                  subgroupBroadcast. Same bindings. Grid foldGrid(ceil(T · G / (LANES · BQ)) · KV).
//   main_dkv       one invocation per (key row j, kv head), iterating over query rows qStart[j] <= i < qEnd[j] (a
//                  loose range is fine: each candidate is kept only if kvStart[i] <= j < kvEnd[i], read from delta)
//                  and over the heads of the kv head's group: bindings 1-3, 7, 9, 10, 12-14. Grid
//                  foldGrid(ceil(S · KV / WG)).
//   main_dkv_tile  a workgroup of WG key rows of one kv head stages tiles of BK (query row, head) pairs of q, dO,
//                  lse, δ and the query's range (the last three from delta): same bindings. Grid
//                  foldGrid(ceil(S / WG) · KV).
//   main_dkv_reg   register blocks for CPU rasterisers: lane l of the subgroup serving kv head w % KV owns the BKR key
//                  rows j = (w / KV) · LANES · BKR + r · LANES + l (r < BKR); the lanes walk the union of their
//                  keys' query ranges [qStart, qEnd), BF tokens per step and every head of the group, loading each
//                  query row of q, dO and delta once per step and sharing it by subgroupBroadcast: bindings 1-3,
//                  7, 9, 10, 12-14. Grid foldGrid(ceil(S / (LANES · BKR)) · KV).
// The tiles take 8 · BK · D + 16 · BK + 8 · WG bytes of workgroup memory. The reg entry points need subgroups of
// exactly LANES invocations.
//
// Shared with attention_forward.wgsl through the slot ATTENTION_COMMON (shaders/attention_common.wgsl): Params and
// bindings 0-5, the row and tile helpers (queryRow, tileRow, blockRange, loadKeyTile, ownKeys) and the register
// walk of main_dq_reg (queryRegWalk, whose slots REG_INIT, REG_STEP, REG_SAVE hold the dq blocks).
//
// Every output row is owned by one invocation that sums in a fixed order: no atomics, deterministic. Workgroup WG
// (LANES for reg); the linear workgroup index is wg.x + wg.y · nwg.x. Compile-time constants: D (head dim, <= 256;
// <= 128 for reg), WG, BK; LANES, BQ, BJ, BKR and the template slots REG_INIT, REG_STEP, REG_SAVE, DKV_INIT, DKV_STEP,
// DKV_NEXT, DKV_SAVE (straight-line code from src/ops/attention_reg.ts; BF is built into DKV_STEP and DKV_NEXT;
// empty when another entry point is compiled). Any D, T, S. On lavapipe an invocation may run at most 65535 loop
// iterations in all: main_dq_reg takes ceil(S / BJ) at most, main_dkv_reg ceil(T / BF) · (G + 1), which the host
// keeps below that; main_dq and main_dkv take about 2 · D + 1 per key or query row.

{{ATTENTION_COMMON}}

@group(0) @binding(6) var<storage, read> o: array<f32>;
@group(0) @binding(7) var<storage, read> dO: array<f32>;
@group(0) @binding(8) var<storage, read> lse: array<f32>;
@group(0) @binding(9) var<storage, read> qStart: array<u32>;
@group(0) @binding(10) var<storage, read> qEnd: array<u32>;
@group(0) @binding(11) var<storage, read_write> dq: array<f32>;
@group(0) @binding(12) var<storage, read_write> delta: array<u32>;
@group(0) @binding(13) var<storage, read_write> dk: array<f32>;
@group(0) @binding(14) var<storage, read_write> dv: array<f32>;

@compute @workgroup_size(WG)
fn main_dq(@builtin(workgroup_id) wg: vec3u, @builtin(num_workgroups) nwg: vec3u,
           @builtin(local_invocation_index) li: u32) {
  let r = queryRow(wg, nwg, li);
  if (r.row >= p.T * p.H) {
    return;
  }
  let row = r.row;
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
  let j1 = min(kvEnd[r.t], p.S);
  for (var j = kvStart[r.t]; j < j1; j++) {
    let base = (j * p.KV + r.kvh) * D;
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
  delta[row * 4u] = kvStart[r.t];
  delta[row * 4u + 1u] = kvEnd[r.t];
  delta[row * 4u + 2u] = bitcast<u32>(m);
  delta[row * 4u + 3u] = bitcast<u32>(dlt);
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
    // Every head of token i shares its key range: read it from the group's first row.
    let first = (i * p.H + kvh * group) * 4u;
    if (j < delta[first] || j >= delta[first + 1u]) {
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
      let pr = exp(s - bitcast<f32>(delta[row * 4u + 2u]));
      let ds = pr * (dp - bitcast<f32>(delta[row * 4u + 3u]));
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

// Tiled entry points: the query-row tiles (aTile, bTile), block range and key-tile load of attention_common.wgsl,
// plus main_dkv_tile's per-row values.
var<workgroup> lseTile: array<f32, BK>;
var<workgroup> deltaTile: array<f32, BK>;
var<workgroup> startTile: array<u32, BK>;
var<workgroup> endTile: array<u32, BK>;

// Query rows as in tileRow (grid foldGrid(ceil(T / WG) · H)); aTile holds K rows, bTile V rows.
@compute @workgroup_size(WG)
fn main_dq_tile(@builtin(workgroup_id) wg: vec3u, @builtin(num_workgroups) nwg: vec3u,
                @builtin(local_invocation_index) li: u32) {
  let r = tileRow(wg, nwg, li);
  let row = r.row;
  var qs: array<f32, D>;
  var g: array<f32, D>;
  var dlt = 0.0;
  var m = 0.0;
  if (r.valid) {
    for (var d = 0u; d < D; d++) {
      qs[d] = q[row * D + d] * p.scale;
      g[d] = dO[row * D + d];
      dlt = fma(g[d], o[row * D + d], dlt);
    }
    m = lse[row];
  }
  let range = blockRange(li, r.j0, r.j1);
  var acc: array<f32, D>;
  for (var jt = range.x; jt < range.y; jt += BK) {
    let n = loadKeyTile(li, jt, range.y, r.kvh);
    let own = ownKeys(r, jt, n);
    for (var jj = own.x; jj < own.y; jj++) {
      var dp = 0.0;
      var s = 0.0;
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
  if (r.valid) {
    for (var d = 0u; d < D; d++) {
      dq[row * D + d] = acc[d] * p.scale;
    }
    delta[row * 4u] = kvStart[r.t];
    delta[row * 4u + 1u] = kvEnd[r.t];
    delta[row * 4u + 2u] = bitcast<u32>(m);
    delta[row * 4u + 3u] = bitcast<u32>(dlt);
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
      startTile[e] = delta[r * 4u];
      endTile[e] = delta[r * 4u + 1u];
      lseTile[e] = bitcast<f32>(delta[r * 4u + 2u]);
      deltaTile[e] = bitcast<f32>(delta[r * 4u + 3u]);
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

// Register-blocked entry points (see the header). main_dq_reg is queryRegWalk of attention_common.wgsl with the dq
// blocks. In main_dkv_reg the generated slots hold each lane's key rows in named registers, define the walk's
// bounds lo, hi and advance i to the next query token in some lane's range.
@compute @workgroup_size(LANES)
fn main_dq_reg(@builtin(workgroup_id) wg: vec3u, @builtin(num_workgroups) nwg: vec3u,
               @builtin({{LANE_ID}}) lane: u32) {
  queryRegWalk(wg, nwg, lane);
}

@compute @workgroup_size(LANES)
fn main_dkv_reg(@builtin(workgroup_id) wg: vec3u, @builtin(num_workgroups) nwg: vec3u,
                @builtin({{LANE_ID}}) lane: u32) {
  let G = p.H / p.KV;
  let w = wg.y * nwg.x + wg.x;
  let kvh = w % p.KV;
  let jBase = (w / p.KV) * (LANES * {{BKR}}u);
  let lastS = max(p.S, 1u) - 1u;
  let lastT = max(p.T, 1u) - 1u;
  let scale = p.scale * LOG2E;
  {{DKV_INIT}}
  for (var i = lo; i < hi;) {
    for (var g = 0u; g < G; g++) {
      {{DKV_STEP}}
    }
    {{DKV_NEXT}}
  }
  {{DKV_SAVE}}
}
