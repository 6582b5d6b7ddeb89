// RMSNorm backward. With xh = r * rstd (the normalised input) and g = w * dy:
//   main     dr[t, c] = rstd[t] * (g[t, c] - xh[t, c] * mean_c(xh[t, :] * g[t, :])) + beta * dr[t, c]
//   main_dw  dw[c]    = sum_t dy[t, c] * xh[t, c] + betaW * dw[c]
// With beta = 1, `dr` holds the gradient already flowing along the residual stream and this adds the norm's
// share, which is how the fused residual add is differentiated (x and a of the forward get the same gradient).
//
// Bindings (group 0):
//   0 p     uniform     Params
//   1 dy    read        [T, C] f32
//   2 r     read        [T, C] f32, the forward's input to the norm (x, or x + a when fused)
//   3 w     read        [C] f32
//   4 rstd  read        [T] f32 from the forward
//   5 dr    read_write  [T, C] f32 (= when beta = 0, += when beta = 1)       (main only)
//   6 dw    read_write  [C] f32 (= when betaW = 0, += when betaW = 1)        (main_dw only)
// main: workgroup WG (a power of two, as the forward's), one workgroup per row, grid T folded (foldGrid).
// main_dw: workgroup 64, one invocation per column summing rows in order (deterministic), grid ceil(C / 64).

struct Params {
  T: u32,
  C: u32,
  beta: f32,
  betaW: f32,
}

@group(0) @binding(0) var<uniform> p: Params;
@group(0) @binding(1) var<storage, read> dy: array<f32>;
@group(0) @binding(2) var<storage, read> r: array<f32>;
@group(0) @binding(3) var<storage, read> w: array<f32>;
@group(0) @binding(4) var<storage, read> rstd: array<f32>;
@group(0) @binding(5) var<storage, read_write> dr: array<f32>;
@group(0) @binding(6) var<storage, read_write> dw: array<f32>;

const WG = {{WG}}u;

var<workgroup> partial: array<f32, WG>;

@compute @workgroup_size(WG)
fn main(@builtin(workgroup_id) wg: vec3u, @builtin(num_workgroups) nwg: vec3u, @builtin(local_invocation_index) li: u32) {
  let row = wg.x + wg.y * nwg.x;
  if (row >= p.T) {
    return;
  }
  let base = row * p.C;
  let s = rstd[row];
  var acc = 0.0;
  for (var c = li; c < p.C; c += WG) {
    acc += r[base + c] * s * w[c] * dy[base + c];
  }
  partial[li] = acc;
  workgroupBarrier();
  for (var k = WG / 2u; k > 0u; k >>= 1u) {
    if (li < k) {
      partial[li] += partial[li + k];
    }
    workgroupBarrier();
  }
  let mean = partial[0] / f32(p.C);
  for (var c = li; c < p.C; c += WG) {
    let i = base + c;
    var v = s * (w[c] * dy[i] - r[i] * s * mean);
    if (p.beta != 0.0) {
      v += p.beta * dr[i];
    }
    dr[i] = v;
  }
}

@compute @workgroup_size(64)
fn main_dw(@builtin(global_invocation_id) gid: vec3u) {
  let c = gid.x;
  if (c >= p.C) {
    return;
  }
  var acc = 0.0;
  for (var t = 0u; t < p.T; t++) {
    acc += dy[t * p.C + c] * r[t * p.C + c] * rstd[t];
  }
  if (p.betaW != 0.0) {
    acc += p.betaW * dw[c];
  }
  dw[c] = acc;
}
