// SwiGLU: h[t, i] = silu(g) * u with g = gu[t, i], u = gu[t, I + i], silu(g) = g * sigmoid(g).
// The gate and up projections come from one matmul whose output row holds the I gate values, then the I up values.
//
// Bindings (group 0):
//   0 p    uniform  Params
//   1 gu   read     [T, 2I] f32
//   2 h    write    [T, I] f32 (=)
// Workgroup 64; one invocation per output element; grid folded (foldGrid).

struct Params {
  T: u32,
  I: u32,
}

@group(0) @binding(0) var<uniform> p: Params;
@group(0) @binding(1) var<storage, read> gu: array<f32>;
@group(0) @binding(2) var<storage, read_write> h: array<f32>;

@compute @workgroup_size(64)
fn main(@builtin(workgroup_id) wg: vec3u, @builtin(num_workgroups) nwg: vec3u, @builtin(local_invocation_index) li: u32) {
  let k = (wg.x + wg.y * nwg.x) * 64u + li;
  if (k >= p.T * p.I) {
    return;
  }
  let t = k / p.I;
  let i = k % p.I;
  let g = gu[t * 2u * p.I + i];
  let u = gu[t * 2u * p.I + p.I + i];
  h[k] = g / (1.0 + exp(-g)) * u;
}
