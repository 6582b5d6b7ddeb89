// AdamW update of one parameter tensor, or of a whole arena chunk of them (decoupled weight decay, bias
// correction, gradient clipping by a scale read on the GPU). With g' = g * stats[1] and wd = weightDecay for the
// elements i < decayEnd (a chunk holds its decayed tensors first), else 0:
//   w <- w - lr * wd * w
//   m <- beta1 * m + (1 - beta1) * g'
//   v <- beta2 * v + (1 - beta2) * g'^2
//   w <- w - lr * (m / bc1) / (sqrt(v / bc2) + eps)        bc1 = 1 - beta1^step, bc2 = 1 - beta2^step
// Nothing changes when stats[2] = 0 (the gradient norm was not finite): the step is skipped on the GPU, and the
// host, which reads stats once per step, does not advance its step counter.
//
// Bindings (group 0):
//   0 p      uniform     Params
//   1 w      read_write  [n] f32 parameters (+=)
//   2 g      read        [n] f32 gradient
//   3 m      read_write  [n] f32 first moment
//   4 v      read_write  [n] f32 second moment
//   5 stats  read        [4] f32 from gradnorm: norm, clip scale, finite
// Workgroup 256; one invocation per element; grid folded (foldGrid).

struct Params {
  n: u32,
  lr: f32,
  beta1: f32,
  beta2: f32,
  eps: f32,
  weightDecay: f32,
  bc1: f32,
  bc2: f32,
  decayEnd: u32,
}

@group(0) @binding(0) var<uniform> p: Params;
@group(0) @binding(1) var<storage, read_write> w: array<f32>;
@group(0) @binding(2) var<storage, read> g: array<f32>;
@group(0) @binding(3) var<storage, read_write> m: array<f32>;
@group(0) @binding(4) var<storage, read_write> v: array<f32>;
@group(0) @binding(5) var<storage, read> stats: array<f32>;

@compute @workgroup_size(256)
fn main(@builtin(workgroup_id) wg: vec3u, @builtin(num_workgroups) nwg: vec3u, @builtin(local_invocation_index) li: u32) {
  let i = (wg.x + wg.y * nwg.x) * 256u + li;
  if (i >= p.n || stats[2] == 0.0) {
    return;
  }
  let grad = g[i] * stats[1];
  let mi = p.beta1 * m[i] + (1.0 - p.beta1) * grad;
  let vi = p.beta2 * v[i] + (1.0 - p.beta2) * grad * grad;
  m[i] = mi;
  v[i] = vi;
  var wi = w[i] * (1.0 - p.lr * select(0.0, p.weightDecay, i < p.decayEnd));
  wi -= p.lr * (mi / p.bc1) / (sqrt(vi / p.bc2) + p.eps);
  w[i] = wi;
}
