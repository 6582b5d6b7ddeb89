// Embedding lookup: out[t, c] = E[ids[t], c], for the ids in the table's rows [start, start + rows).
//
// Bindings (group 0):
//   0 p     uniform  Params
//   1 ids   read     [T] u32 token ids, each < V
//   2 E     read     [rows, C] {{ET}}: rows [start, start + rows) of the [V, C] table (all of it: start 0, rows V)
//   3 out   write    [T, C] f32 (=) where ids[t] is in the range; other rows untouched (another part writes them)
// Workgroup 64; one invocation per output element; grid folded: x + y * 65535-ish workgroups (foldGrid).
{{ENABLE}}

struct Params {
  T: u32,
  C: u32,
  start: u32,
  rows: u32,
}

@group(0) @binding(0) var<uniform> p: Params;
@group(0) @binding(1) var<storage, read> ids: array<u32>;
@group(0) @binding(2) var<storage, read> E: array<{{ET}}>;
@group(0) @binding(3) var<storage, read_write> out: array<f32>;

@compute @workgroup_size(64)
fn main(@builtin(workgroup_id) wg: vec3u, @builtin(num_workgroups) nwg: vec3u, @builtin(local_invocation_index) li: u32) {
  let i = (wg.x + wg.y * nwg.x) * 64u + li;
  if (i >= p.T * p.C) {
    return;
  }
  let t = i / p.C;
  let c = i % p.C;
  let row = ids[t] - p.start; // wraps past `rows` for ids below the part
  if (row < p.rows) {
    out[i] = f32(E[row * p.C + c]);
  }
}
