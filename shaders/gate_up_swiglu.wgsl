// The MLP's gate and up projections and SwiGLU in one pass, for inference (nothing kept for a backward):
// h = silu(x . Wg^T) * (x . Wu^T) with silu(g) = g * sigmoid(g), f32 accumulation.
//
// Bindings (group 0):
//   0 p   uniform     Params
//   1 x   read        [M, K] f32: T x C, the normed hidden states
//   2 Wg  read        [N, K] {{WT}} (f32 or f16): I x C, the gate weight as Hugging Face stores it
//   3 Wu  read        [N, K] {{WT}}: the up weight, same shape
//   4 h   read_write  [M, N] f32 (=)
//
// main_reg's row block (shaders/matmul_forward.wgsl) with two weights: a workgroup is one subgroup of LANES
// invocations; each owns RM rows x CN columns of both products (columns col0 + LANES * j + lane). Per k, lane l loads
// x for rows l, l + LANES, ... and subgroupBroadcast hands each row's value to every lane (SHARE); without
// fixed-size subgroups every lane loads all RM rows itself. Each output sums over k in order with one fma per k, as
// main_reg does, so on an adapter where main_reg runs the unfused products the bits are the same. The blocks are
// straight-line code in the INIT, STEP and SAVE template slots (src/ops/gate_up_swiglu.ts: Deno compiles loops
// over register arrays so that they neither unroll nor stay in registers), staged through workgroup memory for the
// masked stores (2 * RM * CN * LANES floats). Workgroup LANES; grid [ceil(N / (LANES * CN)), ceil(M / RM)].
// Any M, N, K >= 0: loads clamp rows and columns into the matrices and stores are masked. CN is a multiple of 4.
{{ENABLE}}

struct Params {
  M: u32,
  N: u32,
  K: u32,
}

@group(0) @binding(0) var<uniform> p: Params;
@group(0) @binding(1) var<storage, read> x: array<f32>;
@group(0) @binding(2) var<storage, read> Wg: array<{{WT}}>;
@group(0) @binding(3) var<storage, read> Wu: array<{{WT}}>;
@group(0) @binding(4) var<storage, read_write> h: array<f32>;

const RM = {{RM}}u;
const CN = {{CN}}u;
const LANES = {{LANES}}u;

var<workgroup> stageG: array<vec4<f32>, RM * CN * LANES / 4u>;
var<workgroup> stageU: array<vec4<f32>, RM * CN * LANES / 4u>;

@compute @workgroup_size(LANES)
fn main(@builtin(workgroup_id) wid: vec3u, @builtin({{LANE_ID}}) lane: u32) {
  let row0 = wid.y * RM;
  let col0 = wid.x * LANES * CN;
  let lastM = max(p.M, 1u) - 1u;
  let lastN = max(p.N, 1u) - 1u;
  // Per-lane element offsets at k = 0 (rows and columns clamped into the matrices) and the accumulators.
  {{INIT}}
  for (var k = 0u; k < p.K; k++) {
    {{STEP}}
  }
  {{SAVE}}
  for (var i = 0u; i < RM; i++) {
    let m = row0 + i;
    for (var j = 0u; j < CN; j++) {
      let n = col0 + j * LANES + lane;
      if (m < p.M && n < p.N) {
        let at = (i * CN + j) / 4u * LANES + lane;
        let g = stageG[at][j % 4u];
        h[m * p.N + n] = g / (1.0 + exp(-g)) * stageU[at][j % 4u];
      }
    }
  }
}
