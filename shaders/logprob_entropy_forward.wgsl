// Fused log-softmax statistics of each row, one pass over the vocabulary, nothing V-sized written.
// With s = z / temperature over the row's V logits:
//   lse[n]     = log sum_v exp(s_v)
//   logp[n]    = s[targets[n]] - lse[n]                    (log-probability of the given target)
//   entropy[n] = lse[n] - sum_v softmax(s)_v * s_v
// Each invocation keeps an online (max, sum exp, sum exp * s) over its strided share of the row; the WG partial
// triples are merged by a tree reduction in workgroup memory.
//
// Bindings (group 0):
//   0 p        uniform  Params
//   1 logits   read     [N, V] f32
//   2 target   read     [N] u32 (< V; clamped to V - 1 so a masked row with any id is safe)
//   3 logp     write    [N] f32 (=)
//   4 entropy  write    [N] f32 (=)
//   5 lse      write    [N] f32 (=), saved for the backward
// Workgroup WG (a power of two from the host: 256 on GPUs, 16 on CPU rasterisers for small vocabularies, where
// every barrier switches between all of a workgroup's invocations), one workgroup per row; grid N folded.

struct Params {
  N: u32,
  V: u32,
  invTemperature: f32,
}

@group(0) @binding(0) var<uniform> p: Params;
@group(0) @binding(1) var<storage, read> logits: array<f32>;
@group(0) @binding(2) var<storage, read> targets: array<u32>;
@group(0) @binding(3) var<storage, read_write> logp: array<f32>;
@group(0) @binding(4) var<storage, read_write> entropy: array<f32>;
@group(0) @binding(5) var<storage, read_write> lse: array<f32>;

const WG = {{WG}}u;

var<workgroup> maxs: array<f32, WG>;
var<workgroup> sums: array<f32, WG>;
var<workgroup> wsums: array<f32, WG>;

@compute @workgroup_size(WG)
fn main(@builtin(workgroup_id) wg: vec3u, @builtin(num_workgroups) nwg: vec3u, @builtin(local_invocation_index) li: u32) {
  let row = wg.x + wg.y * nwg.x;
  if (row >= p.N) {
    return;
  }
  let base = row * p.V;
  // Online triple over this invocation's share; sum = 0 marks an empty share (max stays -inf).
  var m = -3.4e38;
  var sum = 0.0;
  var wsum = 0.0;
  for (var v = li; v < p.V; v += WG) {
    let s = logits[base + v] * p.invTemperature;
    if (s > m) {
      let scale = exp(m - s);
      sum = sum * scale;
      wsum = wsum * scale;
      m = s;
    }
    let e = exp(s - m);
    sum += e;
    wsum += e * s;
  }
  maxs[li] = m;
  sums[li] = sum;
  wsums[li] = wsum;
  workgroupBarrier();
  for (var k = WG / 2u; k > 0u; k >>= 1u) {
    if (li < k) {
      let m2 = max(maxs[li], maxs[li + k]);
      let a = exp(maxs[li] - m2);
      let b = exp(maxs[li + k] - m2);
      maxs[li] = m2;
      sums[li] = sums[li] * a + sums[li + k] * b;
      wsums[li] = wsums[li] * a + wsums[li + k] * b;
    }
    workgroupBarrier();
  }
  if (li == 0u) {
    let total = sums[0];
    let l = maxs[0] + log(total);
    let t = min(targets[row], p.V - 1u);
    lse[row] = l;
    logp[row] = logits[base + t] * p.invTemperature - l;
    entropy[row] = l - wsums[0] / total;
  }
}
