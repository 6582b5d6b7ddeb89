// Global gradient norm for clipping, in two deterministic stages (no atomics, fixed summation order):
//   main_partial  partials[offset + w] = sum of g^2 over chunk w of one gradient tensor (4096 elements a chunk)
//   main_final    norm = sqrt(sum of all partials); stats = [norm, clip scale, finite]
// The clip scale is min(1, maxNorm / (norm + 1e-6)), or 1 when maxNorm <= 0; finite is 1 when the norm is a
// finite number and 0 otherwise. AdamW reads stats on the GPU, so clipping needs no readback.
//
// Bindings (group 0):
//   0 p         uniform     Params
//   1 g         read        [n] f32 one gradient tensor                          (main_partial)
//   2 partials  read_write  [P] f32 partial sums; written (=) at [offset, offset + chunks)
//   3 stats     write       [4] f32 (=) norm, scale, finite, 0                   (main_final)
// main_partial: workgroup 256, grid ceil(n / 4096) folded (foldGrid). main_final: one workgroup of 256, grid [1];
// `n` is then the number of partials P.

struct Params {
  n: u32,
  offset: u32,
  maxNorm: f32,
}

@group(0) @binding(0) var<uniform> p: Params;
@group(0) @binding(1) var<storage, read> g: array<f32>;
@group(0) @binding(2) var<storage, read_write> partials: array<f32>;
@group(0) @binding(3) var<storage, read_write> stats: array<f32>;

const WG = 256u;
const CHUNK = 4096u;

var<workgroup> acc: array<f32, WG>;

fn reduce(li: u32, v: f32) -> f32 {
  acc[li] = v;
  workgroupBarrier();
  for (var k = WG / 2u; k > 0u; k >>= 1u) {
    if (li < k) {
      acc[li] += acc[li + k];
    }
    workgroupBarrier();
  }
  return acc[0];
}

@compute @workgroup_size(WG)
fn main_partial(@builtin(workgroup_id) wg: vec3u, @builtin(num_workgroups) nwg: vec3u,
                @builtin(local_invocation_index) li: u32) {
  let chunk = wg.x + wg.y * nwg.x;
  let begin = chunk * CHUNK;
  if (begin >= p.n) {
    return;
  }
  let end = min(begin + CHUNK, p.n);
  var s = 0.0;
  for (var i = begin + li; i < end; i += WG) {
    s += g[i] * g[i];
  }
  let total = reduce(li, s);
  if (li == 0u) {
    partials[p.offset + chunk] = total;
  }
}

fn isFinite(x: f32) -> bool {
  return (bitcast<u32>(x) & 0x7f800000u) != 0x7f800000u;
}

@compute @workgroup_size(WG)
fn main_final(@builtin(local_invocation_index) li: u32) {
  var s = 0.0;
  for (var i = li; i < p.n; i += WG) {
    s += partials[i];
  }
  let total = reduce(li, s);
  if (li == 0u) {
    let norm = sqrt(total);
    let finite = isFinite(norm);
    var scale = 1.0;
    if (p.maxNorm > 0.0 && finite) {
      scale = min(1.0, p.maxNorm / (norm + 1e-6));
    }
    stats[0] = norm;
    stats[1] = scale;
    stats[2] = select(0.0, 1.0, finite);
    stats[3] = 0.0;
  }
}
