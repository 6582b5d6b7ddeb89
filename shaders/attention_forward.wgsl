// Grouped-query attention, forward: o = softmax(scale · q kᵀ) · v over each query's key range, and its log-sum-exp.
//
// Query row t, head h attends to exactly the key rows kvStart[t] <= j < min(kvEnd[t], S) of kv head h / (H / KV);
// causality, packing of sequences and KV-cache slots are all expressed by these ranges. One pass over the keys with
// a running max m and sum l (online softmax): the T x S score matrix is never stored.
//
// Bindings (group 0), one layout shared by all entry points (an entry point leaves the others unused); 0-5 are
// declared in attention_common.wgsl, as the backward's:
//   0 p        uniform     Params
//   1 q        read        [T, H, D] f32 (already rotated)
//   2 k        read        [S, KV, D] f32, or f16 read as u32 words of two halves (unpack2x16float): a CPU
//                          rasteriser pays per load, hardly more for a wide one, so one word load brings two
//                          elements. main_lane binds whole rows as vec4s where D allows (KS = vec4<f32>, or
//                          vec4<u32> of 8 halves): a quarter of the loads (timings: docs/kernel-timings.md)
//   3 v        read        [S, KV, D] like k
//   4 kvStart  read        [T] u32
//   5 kvEnd    read        [T] u32
//   6 o        read_write  [T, H, D] f32, written (=) by main, main_tile, main_reg and main_combine; 0 for an
//                          empty range
//   7 lse      read_write  [T, H] f32 = m + log(l) of the scaled scores, written (=) like o; 0 for an empty range
//   8 part     read_write  [splits, T, H, D] f32 = Σ_j exp(s_j − m) v_j over one chunk of keys, written (=) by
//                          main_split, read by main_combine
//   9 stats    read_write  [splits, T, H, 2] f32 = (m, l) of that chunk, written (=) by main_split (l = 0 for an
//                          empty chunk), read by main_combine
//
// Entry points (main, main_tile, main_reg or main_lane alone, or main_split then main_combine):
//   main          single pass over all keys of a row, one invocation per (row, head), k and v read straight from
//                 storage: bindings 1-7. Grid foldGrid(ceil(T · H / WG)).
//   main_tile     the same sums for real GPUs: a workgroup of WG query rows of one head stages K and V tiles of BK
//                 rows in workgroup memory (8 · BK · D + 8 · WG bytes): bindings 1-7.
//                 Grid foldGrid(ceil(T / WG) · H).
//   main_reg      register blocks for CPU rasterisers: a workgroup is one subgroup of LANES lanes and serves kv head
//                 w % KV (w = linear workgroup index); lane l owns the BQ query rows f = (w / KV) · LANES · BQ
//                 + r · LANES + l (r < BQ) of the T · G rows of that kv head's group (G = H / KV; f = t · G + g is
//                 token t, head (w % KV) · G + g). The lanes walk the union of their rows' key ranges together, BJ
//                 keys per step, jumping the gaps between ranges; each step's K and V rows are loaded once (one
//                 element per lane) and shared by subgroupBroadcast. Bindings 1-7.
//                 Grid foldGrid(ceil(T · G / (LANES · BQ)) · KV). Needs subgroups of exactly LANES invocations.
//   main_lane     decoding on CPU rasterisers: one invocation per (row, head) as in main, walking only its own
//                 range, BJ keys per step, q, the running sums and the BJ loaded K and V rows in named registers
//                 (straight-line code, no loop over D). Neighbouring rows sit in different cache slots, so nothing
//                 is worth sharing between lanes. Bindings 1-7. Grid foldGrid(ceil(T · H / WG)).
//   main_split    flash decoding, first half: the keys of each row cut into `splits` equal chunks, each chunk
//                 summed on its own, one invocation per (split, row, head): bindings 1-5, 8, 9.
//                 Grid foldGrid(ceil(splits · T · H / WG)).
//   main_combine  second half, merges the chunks of each row: bindings 6-9. Grid foldGrid(ceil(T · H / WG)).
//
// Shared with attention_backward.wgsl through the slot ATTENTION_COMMON (shaders/attention_common.wgsl): Params and
// bindings 0-5, kAt / vAt, the row and tile helpers (queryRow, tileRow, blockRange, loadKeyTile, ownKeys), and the
// register walk of main_reg (queryRegWalk).
//
// Compile-time constants: D (head dim, <= 256; <= 128 for main_reg), WG, BK; LANES, BQ, BJ and the template slots
// REG_INIT, REG_STEP, REG_SAVE of main_reg and LANE_INIT, LANE_STEP, LANE_SAVE of main_lane (straight-line code
// from src/ops/attention_reg.ts, empty when another entry point is compiled). Any T, S. The linear workgroup index
// is wg.x + wg.y · nwg.x. main and main_split hold q and the output accumulator in D-sized register arrays,
// main_reg in BQ · D named registers, main_lane in D. On lavapipe an invocation may run at most 65535 loop
// iterations in all (more ends its loops early): main_reg takes ceil(S / BJ) at most, main_lane ceil(longest
// range / BJ), the host keeps them below that; main and main_split take about 2 · D + 1 per key.

{{ATTENTION_COMMON}}

@group(0) @binding(6) var<storage, read_write> o: array<f32>;
@group(0) @binding(7) var<storage, read_write> lse: array<f32>;
@group(0) @binding(8) var<storage, read_write> part: array<f32>;
@group(0) @binding(9) var<storage, read_write> stats: array<f32>;
// Below any finite score; exp(NEG - s) is exactly 0. WGSL has no portable infinity.
const NEG = -3.0e38;

// Online softmax over keys [j0, j1) of kv head kvh for query row `row` (= t * H + h): m, l and acc = Σ exp(s − m) v.
struct Partial {
  m: f32,
  l: f32,
}

// One key of the online softmax: takes score s into the running max *m and sum *l, rescaling acc when the maximum
// grows, and returns the key's weight exp(s − m), by which the caller adds its v row to acc.
fn online(s: f32, m: ptr<function, f32>, l: ptr<function, f32>, acc: ptr<function, array<f32, D>>) -> f32 {
  if (s > *m) {
    // New maximum: rescale what was summed so far (rare after the first keys).
    let a = exp(*m - s);
    *l *= a;
    for (var d = 0u; d < D; d++) {
      (*acc)[d] *= a;
    }
    *m = s;
  }
  let e = exp(s - *m);
  *l += e;
  return e;
}

fn attend(row: u32, kvh: u32, j0: u32, j1: u32, acc: ptr<function, array<f32, D>>) -> Partial {
  var qs: array<f32, D>;
  for (var d = 0u; d < D; d++) {
    qs[d] = q[row * D + d] * p.scale;
  }
  var m = NEG;
  var l = 0.0;
  for (var j = j0; j < j1; j++) {
    let base = (j * p.KV + kvh) * D;
    var s = 0.0;
    for (var d = 0u; d < D; d++) {
      s = fma(qs[d], kAt(base + d), s);
    }
    let e = online(s, &m, &l, acc);
    for (var d = 0u; d < D; d++) {
      (*acc)[d] = fma(e, vAt(base + d), (*acc)[d]);
    }
  }
  return Partial(m, l);
}

// Writes row `row` of o (acc / l) and lse (m + log l) from its softmax sums; 0 for both when no key was summed.
fn save(row: u32, acc: ptr<function, array<f32, D>>, m: f32, l: f32) {
  let inv = select(0.0, 1.0 / l, l > 0.0);
  for (var d = 0u; d < D; d++) {
    o[row * D + d] = (*acc)[d] * inv;
  }
  lse[row] = select(0.0, m + log(l), l > 0.0);
}


@compute @workgroup_size(WG)
fn main(@builtin(workgroup_id) wg: vec3u, @builtin(num_workgroups) nwg: vec3u,
        @builtin(local_invocation_index) li: u32) {
  let r = queryRow(wg, nwg, li);
  if (r.row >= p.T * p.H) {
    return;
  }
  var acc: array<f32, D>;
  let sums = attend(r.row, r.kvh, kvStart[r.t], min(kvEnd[r.t], p.S), &acc);
  save(r.row, &acc, sums.m, sums.l);
}

@compute @workgroup_size(WG)
fn main_split(@builtin(workgroup_id) wg: vec3u, @builtin(num_workgroups) nwg: vec3u,
              @builtin(local_invocation_index) li: u32) {
  let id = linearId(wg, nwg, li);
  let rows = p.T * p.H;
  if (id >= rows * p.splits) {
    return;
  }
  let split = id / rows;
  let row = id % rows;
  let t = row / p.H;
  let kvh = (row % p.H) / (p.H / p.KV);
  let j0 = kvStart[t];
  let j1 = min(kvEnd[t], p.S);
  let chunk = (max(j1, j0) - j0 + p.splits - 1u) / p.splits;
  let c0 = min(j0 + split * chunk, j1);
  let c1 = min(c0 + chunk, j1);
  var acc: array<f32, D>;
  let r = attend(row, kvh, c0, c1, &acc);
  for (var d = 0u; d < D; d++) {
    part[id * D + d] = acc[d];
  }
  stats[id * 2u] = r.m;
  stats[id * 2u + 1u] = r.l;
}

@compute @workgroup_size(WG)
fn main_combine(@builtin(workgroup_id) wg: vec3u, @builtin(num_workgroups) nwg: vec3u,
                @builtin(local_invocation_index) li: u32) {
  let row = linearId(wg, nwg, li);
  let rows = p.T * p.H;
  if (row >= rows) {
    return;
  }
  var m = NEG;
  for (var s = 0u; s < p.splits; s++) {
    let at = (s * rows + row) * 2u;
    if (stats[at + 1u] > 0.0) {
      m = max(m, stats[at]);
    }
  }
  var l = 0.0;
  var acc: array<f32, D>;
  for (var s = 0u; s < p.splits; s++) {
    let at = s * rows + row;
    let ls = stats[at * 2u + 1u];
    if (ls > 0.0) {
      let a = exp(stats[at * 2u] - m);
      l = fma(ls, a, l);
      for (var d = 0u; d < D; d++) {
        acc[d] = fma(part[at * D + d], a, acc[d]);
      }
    }
  }
  save(row, &acc, m, l);
}

// main_tile: tiles of BK key rows in workgroup memory (aTile K, bTile V), shared by the WG query rows of one head;
// grid foldGrid(ceil(T / WG) · H), rows as in tileRow. The tiles cover the union of the rows' key ranges; each row
// takes the keys of its own.
@compute @workgroup_size(WG)
fn main_tile(@builtin(workgroup_id) wg: vec3u, @builtin(num_workgroups) nwg: vec3u,
             @builtin(local_invocation_index) li: u32) {
  let r = tileRow(wg, nwg, li);
  var qs: array<f32, D>;
  if (r.valid) {
    for (var d = 0u; d < D; d++) {
      qs[d] = q[r.row * D + d] * p.scale;
    }
  }
  let range = blockRange(li, r.j0, r.j1);
  var acc: array<f32, D>;
  var m = NEG;
  var l = 0.0;
  for (var jt = range.x; jt < range.y; jt += BK) {
    let n = loadKeyTile(li, jt, range.y, r.kvh);
    let own = ownKeys(r, jt, n);
    for (var jj = own.x; jj < own.y; jj++) {
      var s = 0.0;
      for (var d = 0u; d < D; d++) {
        s = fma(qs[d], aTile[jj * D + d], s);
      }
      let e = online(s, &m, &l, &acc);
      for (var d = 0u; d < D; d++) {
        acc[d] = fma(e, bTile[jj * D + d], acc[d]);
      }
    }
    workgroupBarrier();
  }
  if (r.valid) {
    save(r.row, &acc, m, l);
  }
}

// main_reg (see the header): queryRegWalk of attention_common.wgsl with the forward's blocks. Each loaded K or V
// element feeds BQ · LANES query rows. Online softmax per row in log2 units (q scaled by scale · log2 e); a key
// outside a row's own range weighs exactly 0.
const LN2 = 0.6931471805599453;

@compute @workgroup_size(LANES)
fn main_reg(@builtin(workgroup_id) wg: vec3u, @builtin(num_workgroups) nwg: vec3u,
            @builtin({{LANE_ID}}) lane: u32) {
  queryRegWalk(wg, nwg, lane);
}

// main_lane (see the header): one invocation per query row, its own keys only, BJ per step, in named registers.
@compute @workgroup_size(WG)
fn main_lane(@builtin(workgroup_id) wg: vec3u, @builtin(num_workgroups) nwg: vec3u,
             @builtin(local_invocation_index) li: u32) {
  let r = queryRow(wg, nwg, li);
  if (r.row >= p.T * p.H) {
    return;
  }
  let row = r.row;
  let kvh = r.kvh;
  let js = kvStart[r.t];
  let je = min(kvEnd[r.t], p.S);
  let last = max(je, 1u) - 1u;
  let scale = p.scale * LOG2E;
  {{LANE_INIT}}
  for (var j = js; j < je; j += {{BJ}}u) {
    {{LANE_STEP}}
  }
  {{LANE_SAVE}}
}
