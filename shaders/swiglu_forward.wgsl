// SwiGLU: h = silu(g) * u with silu(g) = g * sigmoid(g), elementwise over the gate and up projections.
//
// Bindings (group 0):
//   0 p    uniform  Params
//   1 g    read     [T, I] f32 gate projection
//   2 u    read     [T, I] f32 up projection
//   3 h    write    [T, I] f32 (=)
// Workgroup 64; one invocation per element; grid folded (foldGrid).

struct Params {
  n: u32,
}

@group(0) @binding(0) var<uniform> p: Params;
@group(0) @binding(1) var<storage, read> g: array<f32>;
@group(0) @binding(2) var<storage, read> u: array<f32>;
@group(0) @binding(3) var<storage, read_write> h: array<f32>;

@compute @workgroup_size(64)
fn main(@builtin(workgroup_id) wg: vec3u, @builtin(num_workgroups) nwg: vec3u, @builtin(local_invocation_index) li: u32) {
  let k = (wg.x + wg.y * nwg.x) * 64u + li;
  if (k >= p.n) {
    return;
  }
  let x = g[k];
  h[k] = x / (1.0 + exp(-x)) * u[k];
}
