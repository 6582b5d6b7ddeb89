// Bias gradient of a matmul epilogue: db[n] = sum over rows r of dY[r, n], plus beta * db[n].
//
// Bindings (group 0):
//   0 p    uniform     Params
//   1 dY   read        [rows, N] f32
//   2 db   read_write  [N] f32; written (=) when beta = 0, accumulated when beta = 1
// Workgroup 64; grid [ceil(N / 64)]. One invocation per column sums the rows in order: deterministic, and
// adjacent invocations read adjacent columns.

struct Params {
  rows: u32,
  N: u32,
  beta: f32,
}

@group(0) @binding(0) var<uniform> p: Params;
@group(0) @binding(1) var<storage, read> dY: array<f32>;
@group(0) @binding(2) var<storage, read_write> db: array<f32>;

@compute @workgroup_size(64)
fn main(@builtin(global_invocation_id) gid: vec3u) {
  let n = gid.x;
  if (n >= p.N) {
    return;
  }
  var sum = 0.0;
  for (var r = 0u; r < p.rows; r++) {
    sum += dY[r * p.N + n];
  }
  if (p.beta != 0.0) {
    sum += p.beta * db[n];
  }
  db[n] = sum;
}
