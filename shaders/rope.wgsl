// Rotary position embedding in Qwen's split-halves form (rotate_half), in place, forward or backward.
// For each rotated head vector x [D] of token t, with pair i < D/2, angle pos[t] * invFreq[i]:
//   x'[i]       = x[i] * cos - x[i + D/2] * sin
//   x'[i + D/2] = x[i + D/2] * cos + x[i] * sin
// The backward of a rotation is the rotation by -angle, so one shader serves both: `direction` is +1 forward
// and -1 backward (the sine changes sign).
//
// Bindings (group 0):
//   0 p     uniform     Params
//   1 x     read_write  [T, stride, D] f32; heads [0, heads) of each token are rotated in place
//   2 pos   read        [T] u32 positions
//   3 cosT  read        [P, D/2] f32 cos(pos * invFreq), computed on the host in f64 (P > every position)
//   4 sinT  read        [P, D/2] f32 sin(pos * invFreq)
// Workgroup 64; one invocation per (token, head, pair); grid folded (foldGrid). D must be even.

struct Params {
  T: u32,
  heads: u32,
  stride: u32,
  D: u32,
  direction: f32,
}

@group(0) @binding(0) var<uniform> p: Params;
@group(0) @binding(1) var<storage, read_write> x: array<f32>;
@group(0) @binding(2) var<storage, read> pos: array<u32>;
@group(0) @binding(3) var<storage, read> cosT: array<f32>;
@group(0) @binding(4) var<storage, read> sinT: array<f32>;

@compute @workgroup_size(64)
fn main(@builtin(workgroup_id) wg: vec3u, @builtin(num_workgroups) nwg: vec3u, @builtin(local_invocation_index) li: u32) {
  let half = p.D / 2u;
  let i = (wg.x + wg.y * nwg.x) * 64u + li;
  if (i >= p.T * p.heads * half) {
    return;
  }
  let pair = i % half;
  let head = (i / half) % p.heads;
  let t = i / (half * p.heads);
  let base = (t * p.stride + head) * p.D;
  let at = pos[t] * half + pair;
  let c = cosT[at];
  let s = p.direction * sinT[at];
  let lo = x[base + pair];
  let hi = x[base + pair + half];
  x[base + pair] = lo * c - hi * s;
  x[base + pair + half] = hi * c + lo * s;
}
