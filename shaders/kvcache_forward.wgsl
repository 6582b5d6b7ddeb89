// KV-cache write: cache[rows[t], :] = src[t, :] for each new token t (its key or value vector, all kv heads).
// Rows past the cache (rows[t] >= S) are dropped, so the host can park a token it does not want stored.
//
// Bindings (group 0):
//   0 p      uniform     Params
//   1 src    read        [T, W] f32 new keys or values, W = KV * D
//   2 rows   read        [T] u32 destination row of each token
//   3 cache  read_write  [S, W] {{CT}} (=) at the given rows, other rows untouched
// Workgroup 64; one invocation per element of src; grid folded (foldGrid).
{{ENABLE}}

struct Params {
  T: u32,
  W: u32,
  S: u32,
}

@group(0) @binding(0) var<uniform> p: Params;
@group(0) @binding(1) var<storage, read> src: array<f32>;
@group(0) @binding(2) var<storage, read> rows: array<u32>;
@group(0) @binding(3) var<storage, read_write> cache: array<{{CT}}>;

@compute @workgroup_size(64)
fn main(@builtin(workgroup_id) wg: vec3u, @builtin(num_workgroups) nwg: vec3u, @builtin(local_invocation_index) li: u32) {
  let i = (wg.x + wg.y * nwg.x) * 64u + li;
  if (i >= p.T * p.W) {
    return;
  }
  let row = rows[i / p.W];
  if (row >= p.S) {
    return;
  }
  cache[row * p.W + i % p.W] = {{CT}}(src[i]);
}
