// SwiGLU backward. With s = sigmoid(g):
//   dg = dh * u * s * (1 + g * (1 - s))      du = dh * g * s
//
// Bindings (group 0):
//   0 p     uniform  Params
//   1 gu    read     [T, 2I] f32 forward input (gate values, then up values, per row)
//   2 dh    read     [T, I] f32
//   3 dgu   write    [T, 2I] f32 (=), same layout as gu
// Workgroup 64; one invocation per (t, i); grid folded (foldGrid).

struct Params {
  T: u32,
  I: u32,
}

@group(0) @binding(0) var<uniform> p: Params;
@group(0) @binding(1) var<storage, read> gu: array<f32>;
@group(0) @binding(2) var<storage, read> dh: array<f32>;
@group(0) @binding(3) var<storage, read_write> dgu: array<f32>;

@compute @workgroup_size(64)
fn main(@builtin(workgroup_id) wg: vec3u, @builtin(num_workgroups) nwg: vec3u, @builtin(local_invocation_index) li: u32) {
  let k = (wg.x + wg.y * nwg.x) * 64u + li;
  if (k >= p.T * p.I) {
    return;
  }
  let t = k / p.I;
  let i = k % p.I;
  let gi = t * 2u * p.I + i;
  let g = gu[gi];
  let u = gu[gi + p.I];
  let s = 1.0 / (1.0 + exp(-g));
  let d = dh[k];
  dgu[gi] = d * u * s * (1.0 + g * (1.0 - s));
  dgu[gi + p.I] = d * g * s;
}
