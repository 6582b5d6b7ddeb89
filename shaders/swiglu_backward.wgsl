// SwiGLU backward. With s = sigmoid(g):
//   dg = dh * u * s * (1 + g * (1 - s))      du = dh * g * s
//
// Bindings (group 0):
//   0 p    uniform  Params
//   1 g    read     [T, I] f32 forward gate input
//   2 u    read     [T, I] f32 forward up input
//   3 dh   read     [T, I] f32
//   4 dg   write    [T, I] f32 (=)
//   5 du   write    [T, I] f32 (=)
// Workgroup 64; one invocation per element; grid folded (foldGrid).

struct Params {
  n: u32,
}

@group(0) @binding(0) var<uniform> p: Params;
@group(0) @binding(1) var<storage, read> g: array<f32>;
@group(0) @binding(2) var<storage, read> u: array<f32>;
@group(0) @binding(3) var<storage, read> dh: array<f32>;
@group(0) @binding(4) var<storage, read_write> dg: array<f32>;
@group(0) @binding(5) var<storage, read_write> du: array<f32>;

@compute @workgroup_size(64)
fn main(@builtin(workgroup_id) wg: vec3u, @builtin(num_workgroups) nwg: vec3u, @builtin(local_invocation_index) li: u32) {
  let k = (wg.x + wg.y * nwg.x) * 64u + li;
  if (k >= p.n) {
    return;
  }
  let x = g[k];
  let s = 1.0 / (1.0 + exp(-x));
  let d = dh[k];
  dg[k] = d * u[k] * s * (1.0 + x * (1.0 - s));
  du[k] = d * x * s;
}
