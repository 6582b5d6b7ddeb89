// RMSNorm, optionally fused with the residual add before it:
//   main      r = x                      y = r * rstd * w,  rstd = 1 / sqrt(mean_c(r^2) + eps)
//   main_add  r = x + a, written to sum   y as above
//
// Bindings (group 0):
//   0 p     uniform  Params
//   1 x     read     [T, C] f32
//   2 w     read     [C] f32
//   3 y     write    [T, C] f32 (=)
//   4 rstd  write    [T] f32 (=), saved for the backward
//   5 a     read     [T, C] f32           (main_add only)
//   6 sum   write    [T, C] f32 (=) x + a (main_add only; the residual stream after the add)
// Workgroup WG (a power of two from 2 to 256, set by the host: 64 on GPUs, 8 on CPU rasterisers, where every
// barrier switches between all of a workgroup's invocations), one workgroup per row: threads stride over C, then
// a tree reduction in workgroup memory.
// Grid: T workgroups, folded (foldGrid).

struct Params {
  T: u32,
  C: u32,
  eps: f32,
}

@group(0) @binding(0) var<uniform> p: Params;
@group(0) @binding(1) var<storage, read> x: array<f32>;
@group(0) @binding(2) var<storage, read> w: array<f32>;
@group(0) @binding(3) var<storage, read_write> y: array<f32>;
@group(0) @binding(4) var<storage, read_write> rstd: array<f32>;
@group(0) @binding(5) var<storage, read> a: array<f32>;
@group(0) @binding(6) var<storage, read_write> sum: array<f32>;

const WG = {{WG}}u;

var<workgroup> partial: array<f32, WG>;

fn reduce(li: u32, v: f32) -> f32 {
  partial[li] = v;
  workgroupBarrier();
  for (var s = WG / 2u; s > 0u; s >>= 1u) {
    if (li < s) {
      partial[li] += partial[li + s];
    }
    workgroupBarrier();
  }
  let total = partial[0];
  workgroupBarrier();
  return total;
}

@compute @workgroup_size(WG)
fn main(@builtin(workgroup_id) wg: vec3u, @builtin(num_workgroups) nwg: vec3u, @builtin(local_invocation_index) li: u32) {
  let row = wg.x + wg.y * nwg.x;
  if (row >= p.T) {
    return;
  }
  let base = row * p.C;
  var ss = 0.0;
  for (var c = li; c < p.C; c += WG) {
    let v = x[base + c];
    ss += v * v;
  }
  let r = inverseSqrt(reduce(li, ss) / f32(p.C) + p.eps);
  if (li == 0u) {
    rstd[row] = r;
  }
  for (var c = li; c < p.C; c += WG) {
    y[base + c] = x[base + c] * r * w[c];
  }
}

@compute @workgroup_size(WG)
fn main_add(@builtin(workgroup_id) wg: vec3u, @builtin(num_workgroups) nwg: vec3u,
            @builtin(local_invocation_index) li: u32) {
  let row = wg.x + wg.y * nwg.x;
  if (row >= p.T) {
    return;
  }
  let base = row * p.C;
  var ss = 0.0;
  for (var c = li; c < p.C; c += WG) {
    let v = x[base + c] + a[base + c];
    sum[base + c] = v;
    ss += v * v;
  }
  let r = inverseSqrt(reduce(li, ss) / f32(p.C) + p.eps);
  if (li == 0u) {
    rstd[row] = r;
  }
  // Each invocation rereads only the elements it wrote itself: no barrier needed between the two loops.
  for (var c = li; c < p.C; c += WG) {
    y[base + c] = sum[base + c] * r * w[c];
  }
}
