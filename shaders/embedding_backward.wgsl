// Embedding backward, deterministic without float atomics: dE[v, c] += sum over t with ids[t] = v of dOut[t, c].
//
// The host buckets the (host-known) ids once per batch: `tokens` lists each distinct id once, and the positions
// of token u are order[offsets[u] .. offsets[u + 1]) in increasing t. Each workgroup owns one distinct id, so no
// two invocations write the same row, and the sum runs in a fixed order. A table split by rows (src/gpu/split.ts)
// is one dispatch per part: the distinct ids [first, first + U) of the part's rows [start, ...).
//
// Bindings (group 0):
//   0 p        uniform     Params
//   1 dOut     read        [T, C] f32
//   2 tokens   read        [U] u32 distinct ids
//   3 offsets  read        [U + 1] u32 bucket starts into `order`
//   4 order    read        [T] u32 positions t, grouped by id
//   5 dE       read_write  [rows, C] f32: rows [start, ...) of the [V, C] gradient (all of it: start 0),
//                          accumulated (+=); rows of ids not in the batch are untouched
// Workgroup 64 (threads stride over C); grid: U workgroups, folded (foldGrid).

struct Params {
  U: u32,
  C: u32,
  first: u32,
  start: u32,
}

@group(0) @binding(0) var<uniform> p: Params;
@group(0) @binding(1) var<storage, read> dOut: array<f32>;
@group(0) @binding(2) var<storage, read> tokens: array<u32>;
@group(0) @binding(3) var<storage, read> offsets: array<u32>;
@group(0) @binding(4) var<storage, read> order: array<u32>;
@group(0) @binding(5) var<storage, read_write> dE: array<f32>;

@compute @workgroup_size(64)
fn main(@builtin(workgroup_id) wg: vec3u, @builtin(num_workgroups) nwg: vec3u, @builtin(local_invocation_index) li: u32) {
  let w = wg.x + wg.y * nwg.x;
  if (w >= p.U) {
    return;
  }
  let u = p.first + w;
  let row = (tokens[u] - p.start) * p.C;
  let begin = offsets[u];
  let end = offsets[u + 1u];
  for (var c = li; c < p.C; c += 64u) {
    var sum = 0.0;
    for (var k = begin; k < end; k++) {
      sum += dOut[order[k] * p.C + c];
    }
    dE[row + c] += sum;
  }
}
