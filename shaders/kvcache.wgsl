// KV-cache write with RoPE, one dispatch per layer: for each new token t, its query heads are rotated in place, and
// its key heads (rotated) and value heads are stored at cache row rows[t]. Rows past the cache (rows[t] >= S) are not
// stored, so the host can park a token it does not want kept. The rotation is Qwen's split-halves form, as in
// rope.wgsl: for pair i < D/2 at angle pos[t] * invFreq[i],
//   x'[i] = x[i] * cos - x[i + D/2] * sin,   x'[i + D/2] = x[i + D/2] * cos + x[i] * sin.
// Fusing the four passes (rotate q, rotate k, store k, store v) matters when decoding, where each pass is a handful
// of vectors and the dispatch costs more than the work.
//
// Bindings (group 0), 8 storage buffers (WebGPU's guaranteed minimum):
//   0 p     uniform     Params
//   1 q     read_write  [T, H, D] f32, rotated in place
//   2 k     read        [T, KV, D] f32 new keys (not rotated)
//   3 v     read        [T, KV, D] f32 new values
//   4 idx   read        [2T] u32: positions [0, T), then cache rows [T, 2T)
//   5 cosT  read        [P, D/2] f32 cos(pos * invFreq), from the host in f64 (P > every position)
//   6 sinT  read        [P, D/2] f32 sin(pos * invFreq)
//   7 kc    read_write  [S, KV, D] {{CT}} key cache
//   8 vc    read_write  [S, KV, D] {{CT}} value cache
// Workgroup 64; one invocation per (token, query head, pair); grid folded (foldGrid). H >= KV, D even.
{{ENABLE}}

struct Params {
  T: u32,
  H: u32,
  KV: u32,
  D: u32,
  S: u32,
}

@group(0) @binding(0) var<uniform> p: Params;
@group(0) @binding(1) var<storage, read_write> q: array<f32>;
@group(0) @binding(2) var<storage, read> k: array<f32>;
@group(0) @binding(3) var<storage, read> v: array<f32>;
@group(0) @binding(4) var<storage, read> idx: array<u32>;
@group(0) @binding(5) var<storage, read> cosT: array<f32>;
@group(0) @binding(6) var<storage, read> sinT: array<f32>;
@group(0) @binding(7) var<storage, read_write> kc: array<{{CT}}>;
@group(0) @binding(8) var<storage, read_write> vc: array<{{CT}}>;

@compute @workgroup_size(64)
fn main(@builtin(workgroup_id) wg: vec3u, @builtin(num_workgroups) nwg: vec3u, @builtin(local_invocation_index) li: u32) {
  let half = p.D / 2u;
  let i = (wg.x + wg.y * nwg.x) * 64u + li;
  if (i >= p.T * p.H * half) {
    return;
  }
  let pair = i % half;
  let head = (i / half) % p.H;
  let t = i / (half * p.H);
  let at = idx[t] * half + pair;
  let c = cosT[at];
  let s = sinT[at];
  let qb = (t * p.H + head) * p.D;
  let qlo = q[qb + pair];
  let qhi = q[qb + pair + half];
  q[qb + pair] = qlo * c - qhi * s;
  q[qb + pair + half] = qhi * c + qlo * s;
  if (head >= p.KV) {
    return;
  }
  let row = idx[p.T + t];
  if (row >= p.S) {
    return;
  }
  let kb = (t * p.KV + head) * p.D;
  let cb = (row * p.KV + head) * p.D;
  let klo = k[kb + pair];
  let khi = k[kb + pair + half];
  kc[cb + pair] = {{CT}}(klo * c - khi * s);
  kc[cb + pair + half] = {{CT}}(khi * c + klo * s);
  vc[cb + pair] = {{CT}}(v[kb + pair]);
  vc[cb + pair + half] = {{CT}}(v[kb + pair + half]);
}
