// Backward of the fused log-softmax statistics, written over the logits (the softmax is recomputed from the
// saved lse, never stored). With s = z / temperature, q_v = softmax(s)_v = exp(s_v - lse), H the entropy:
//   dz_v = invTemperature * ( dlogp * ([v == target] - q_v)  -  dentropy * q_v * (s_v - lse + H) )
// Rows with dlogp = dentropy = 0 (masked tokens) get zeros, as the LM head's backward needs.
//
// Bindings (group 0):
//   0 p         uniform     Params
//   1 logits    read_write  [N, V] f32: logits in, their gradient out (=)
//   2 target    read        [N] u32 (clamped to V - 1)
//   3 lse       read        [N] f32 from the forward
//   4 entropy   read        [N] f32 from the forward
//   5 dlogp     read        [N] f32 upstream gradient of logp
//   6 dentropy  read        [N] f32 upstream gradient of entropy
// Workgroup 256, one workgroup per row; grid N folded (foldGrid).

struct Params {
  N: u32,
  V: u32,
  invTemperature: f32,
}

@group(0) @binding(0) var<uniform> p: Params;
@group(0) @binding(1) var<storage, read_write> logits: array<f32>;
@group(0) @binding(2) var<storage, read> targets: array<u32>;
@group(0) @binding(3) var<storage, read> lse: array<f32>;
@group(0) @binding(4) var<storage, read> entropy: array<f32>;
@group(0) @binding(5) var<storage, read> dlogp: array<f32>;
@group(0) @binding(6) var<storage, read> dentropy: array<f32>;

const WG = 256u;

@compute @workgroup_size(WG)
fn main(@builtin(workgroup_id) wg: vec3u, @builtin(num_workgroups) nwg: vec3u, @builtin(local_invocation_index) li: u32) {
  let row = wg.x + wg.y * nwg.x;
  if (row >= p.N) {
    return;
  }
  let base = row * p.V;
  let t = min(targets[row], p.V - 1u);
  let l = lse[row];
  let h = entropy[row];
  let gl = dlogp[row];
  let ge = dentropy[row];
  for (var v = li; v < p.V; v += WG) {
    let s = logits[base + v] * p.invTemperature;
    let logq = s - l;
    let q = exp(logq);
    var g = -gl * q - ge * q * (logq + h);
    if (v == t) {
      g += gl;
    }
    logits[base + v] = g * p.invTemperature;
  }
}
