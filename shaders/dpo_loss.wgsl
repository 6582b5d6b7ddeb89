// DPO's loss over pairs of sequences packed end to end, fused between the model's two passes: from each position's
// logp (the policy's, at temperature 1) and weight, each sequence's log-probability s = Σ_t w_t · logp_t (w is 1 on a
// trained position for TRL's summed log-probability, 1/n for IPO's mean, 0 on prompt, observation and padding), then
// with z = (s_c − s_r) − (ref_c − ref_r) per pair:
//   sigmoid  L = −(1 − ε) log σ(βz) − ε log σ(−βz)     dL/dz = −(1 − ε) β σ(−βz) + ε β σ(βz)
//   ipo      L = (z − 1/(2β))²                         dL/dz = 2 (z − 1/(2β))
//   hinge    L = max(0, 1 − βz)                        dL/dz = −β where 1 − βz > 0, else 0 (PyTorch's relu at 0)
// and the gradient of scale · Σ_pairs L with respect to every position's logp: scale · dL/dz · w_t on the chosen
// sequence's positions, −scale · dL/dz · w_t on the rejected one's. The CPU definition is src/rl/dpo.ts (dpoLoss,
// dpoLogitGrad). A position with w = 0 gets dlogp 0 and its logp is never used in arithmetic (garbage there cannot
// leak). Sums are in f32 in a fixed order (no atomics): the same inputs give the same bits.
//
// Bindings (group 0); T = the positions of one packed micro-batch, P = its pairs:
//   0 p        uniform     Params
//   1 logp     read        [T] f32
//   2 weight   read        [T] f32
//   3 spans    read        [P, 4] u32: chosen start, chosen length, rejected start, rejected length (positions in T;
//                          the spans of all pairs tile [0, T))
//   4 reference read       [P, 2] f32: the reference's s_c, s_r
//   5 dlogp    read_write  [T] f32 (=) over every span
//   6 stats    read_write  [P, 5] f32 (=): L, β(s_c − ref_c), β(s_r − ref_r), s_c, s_r (DPO_STATS in dpo_loss.ts)
// Workgroup 64, one workgroup per pair; grid P workgroups, folded into y (foldGrid).

struct Params {
  P: u32,
  lossType: u32,
  beta: f32,
  labelSmoothing: f32,
  scale: f32,
}

@group(0) @binding(0) var<uniform> p: Params;
@group(0) @binding(1) var<storage, read> logp: array<f32>;
@group(0) @binding(2) var<storage, read> weight: array<f32>;
@group(0) @binding(3) var<storage, read> spans: array<vec4u>;
@group(0) @binding(4) var<storage, read> reference: array<vec2f>;
@group(0) @binding(5) var<storage, read_write> dlogp: array<f32>;
@group(0) @binding(6) var<storage, read_write> stats: array<f32>;

const WG = 64u;
const SIGMOID = 0u;
const IPO = 1u;

var<workgroup> acc: array<f32, WG>;
var<workgroup> slope: f32;

fn reduce(li: u32, v: f32) -> f32 {
  acc[li] = v;
  workgroupBarrier();
  for (var k = WG / 2u; k > 0u; k >>= 1u) {
    if (li < k) {
      acc[li] += acc[li + k];
    }
    workgroupBarrier();
  }
  let total = acc[0];
  workgroupBarrier();
  return total;
}

// Σ w_t · logp_t over [start, start + count), by this invocation's stride, then over the workgroup.
fn spanSum(li: u32, start: u32, count: u32) -> f32 {
  var s = 0.0;
  for (var i = li; i < count; i += WG) {
    let w = weight[start + i];
    if (w != 0.0) {
      s += w * logp[start + i];
    }
  }
  return reduce(li, s);
}

// log(1 + y) for y in [0, 1], accurate where 1 + y rounds (the textbook correction of log(u) · y / (u − 1)).
fn log1p(y: f32) -> f32 {
  let u = 1.0 + y;
  if (u == 1.0) {
    return y;
  }
  return log(u) * y / (u - 1.0);
}

fn logSigmoid(x: f32) -> f32 {
  if (x < 0.0) {
    return x - log1p(exp(x));
  }
  return -log1p(exp(-x));
}

fn sigmoid(x: f32) -> f32 {
  if (x < 0.0) {
    let e = exp(x);
    return e / (1.0 + e);
  }
  return 1.0 / (1.0 + exp(-x));
}

fn writeGrad(li: u32, start: u32, count: u32, g: f32) {
  for (var i = li; i < count; i += WG) {
    let w = weight[start + i];
    dlogp[start + i] = select(0.0, g * w, w != 0.0);
  }
}

@compute @workgroup_size(WG)
fn main(@builtin(workgroup_id) wg: vec3u, @builtin(num_workgroups) nwg: vec3u, @builtin(local_invocation_index) li: u32) {
  let pair = wg.x + wg.y * nwg.x;
  if (pair >= p.P) {
    return;
  }
  let span = spans[pair];
  let sc = spanSum(li, span.x, span.y);
  let sr = spanSum(li, span.z, span.w);
  if (li == 0u) {
    let r = reference[pair];
    let b = p.beta;
    let z = (sc - sr) - (r.x - r.y);
    var loss: f32;
    var d: f32;
    if (p.lossType == SIGMOID) {
      let e = p.labelSmoothing;
      loss = -(1.0 - e) * logSigmoid(b * z) - e * logSigmoid(-b * z);
      d = -(1.0 - e) * b * sigmoid(-b * z) + e * b * sigmoid(b * z);
    } else if (p.lossType == IPO) {
      let q = z - 1.0 / (2.0 * b);
      loss = q * q;
      d = 2.0 * q;
    } else {
      let h = 1.0 - b * z;
      loss = max(0.0, h);
      d = select(0.0, -b, h > 0.0);
    }
    let s = pair * 5u;
    stats[s] = loss;
    stats[s + 1u] = b * (sc - r.x);
    stats[s + 2u] = b * (sr - r.y);
    stats[s + 3u] = sc;
    stats[s + 4u] = sr;
    slope = p.scale * d;
  }
  workgroupBarrier();
  let g = slope;
  writeGrad(li, span.x, span.y, g);
  writeGrad(li, span.z, span.w, -g);
}
