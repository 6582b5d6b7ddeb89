// Per-token RL policy loss, fused into the LM head pass: from the model's logp and entropy of each token (logits
// already divided by the temperature) and the host's per-token inputs, the gradient of
//   L = Σ_t w_t [pg_t + klCoef · kl_t] − entropyCoef · Σ_t w_t H_t
// with respect to logp_t and H_t, and per-token statistics the trainer sums after its one readback.
//   pg_t: Δ = clamp(logp − old, ±20), ρ = e^Δ, L1 = −Aρ, L2 = −A·clamp(ρ, 1 − clipLow, 1 + clipHigh),
//         Lc = max(L1, L2); for A < 0, min(Lc, −A·clipC). Gradient −Aρ only where L1 is active and |logp − old| ≤ 20.
//   kl_t (d = logp − ref): k1 d; abs |d|; k2 d²/2; k3 clamp(e^u − u − 1, ±10) with u = clamp(−d, ±20);
//         straightThrough: the chosen value, the k2 gradient d. klKind 4 = none.
// The CPU definition is src/train/policy_objective.ts (policyObjective); gradients follow PyTorch at clamps.
// Tokens with w = 0 (masked) get zeros everywhere and their other inputs are never used in arithmetic, so garbage
// (NaN, ±inf) there cannot leak.
//
// Bindings (group 0); T = the tokens of one head chunk:
//   0 p         uniform     Params
//   1 logp      read        [T] f32
//   2 entropy   read        [T] f32
//   3 inputs    read        [T, 4] f32: oldLogp, refLogp, advantage, weight w
//   4 dlogp     read_write  [T] f32 (=)  w·(dpg + klCoef·dkl)
//   5 dentropy  read_write  [T] f32 (=)  −entropyCoef·w
//   6 stats     read_write  [T, 8] f32 (=)  w·pg, w·kl, w·H, m·clipped, m·dualClipped, m·ρ, m·(old − logp), m
//                                         with m = [w ≠ 0] (POLICY_STATS in policy_objective.ts)
// Workgroup 64, one invocation per token; grid ceil(T / 64) workgroups, folded into y (foldGrid).

struct Params {
  N: u32,
  klKind: u32,
  straightThrough: u32,
  clipLow: f32,
  clipHigh: f32,
  clipC: f32,
  klCoef: f32,
  entropyCoef: f32,
}

@group(0) @binding(0) var<uniform> p: Params;
@group(0) @binding(1) var<storage, read> logp: array<f32>;
@group(0) @binding(2) var<storage, read> entropy: array<f32>;
@group(0) @binding(3) var<storage, read> inputs: array<vec4f>;
@group(0) @binding(4) var<storage, read_write> dlogp: array<f32>;
@group(0) @binding(5) var<storage, read_write> dentropy: array<f32>;
@group(0) @binding(6) var<storage, read_write> stats: array<f32>;

const WG = 64u;
const KL_NONE = 4u;

// [value, d value / d logp] of the KL estimator for d = logp − ref.
fn kl(d: f32) -> vec2f {
  var r: vec2f;
  switch p.klKind {
    case 0u: {
      r = vec2f(d, 1.0);
    }
    case 1u: {
      r = vec2f(abs(d), sign(d));
    }
    case 2u: {
      r = vec2f(0.5 * d * d, d);
    }
    case 3u: {
      let u = clamp(-d, -20.0, 20.0);
      let eu = exp(u);
      let k = eu - u - 1.0;
      r = vec2f(clamp(k, -10.0, 10.0), select(0.0, 1.0 - eu, abs(d) <= 20.0 && k <= 10.0));
    }
    default: {
      r = vec2f(0.0, 0.0);
    }
  }
  if (p.straightThrough != 0u) {
    r.y = d;
  }
  return r;
}

@compute @workgroup_size(WG)
fn main(@builtin(workgroup_id) wg: vec3u, @builtin(num_workgroups) nwg: vec3u, @builtin(local_invocation_index) li: u32) {
  let t = (wg.x + wg.y * nwg.x) * WG + li;
  if (t >= p.N) {
    return;
  }
  let x = inputs[t];
  let w = x.w;
  let s = t * 8u;
  if (w == 0.0) {
    dlogp[t] = 0.0;
    dentropy[t] = 0.0;
    for (var i = 0u; i < 8u; i++) {
      stats[s + i] = 0.0;
    }
    return;
  }
  let lp = logp[t];
  let h = entropy[t];
  let old = x.x;
  let a = x.z;

  let diff = lp - old;
  let ratio = exp(clamp(diff, -20.0, 20.0));
  let l1 = -a * ratio;
  let l2 = -a * clamp(ratio, 1.0 - p.clipLow, 1.0 + p.clipHigh);
  let clipped = l2 > l1;
  var pg = max(l1, l2);
  var dpg = select(0.0, -a * ratio, !clipped && abs(diff) <= 20.0);
  var lower = false;
  if (a < 0.0) {
    let l3 = -a * p.clipC;
    lower = pg > l3;
    pg = select(pg, l3, lower);
    dpg = select(dpg, 0.0, lower);
  }

  var k = vec2f(0.0, 0.0);
  if (p.klKind != KL_NONE) {
    k = kl(lp - x.y);
  }

  dlogp[t] = w * (dpg + p.klCoef * k.y);
  dentropy[t] = -p.entropyCoef * w;
  stats[s] = w * pg;
  stats[s + 1u] = w * k.x;
  stats[s + 2u] = w * h;
  stats[s + 3u] = select(0.0, 1.0, clipped);
  stats[s + 4u] = select(0.0, 1.0, lower);
  stats[s + 5u] = ratio;
  stats[s + 6u] = old - lp;
  stats[s + 7u] = 1.0;
}
