// Token sampler for decoding: one token id per row of logits, and its log-probability.
//
// Per row z (V logits): greedy (greedy = 1) takes the argmax, first index on ties. Otherwise, in Hugging Face's
// order: s = z / T; top-k keeps every token whose probability is >= the k-th largest (ties kept); top-p keeps,
// of those, the smallest set of most probable tokens whose mass reaches topP of the top-k mass (ties at the
// threshold kept); the token is the first index, in index order, whose cumulative kept mass exceeds u * keptMass.
// logprob = s[id] - max(s) - log(sum(exp(s - max(s)))) over the FULL vocabulary (T = 1 when greedy).
//
// Bindings (group 0):
//   0 p           uniform     Params
//   1 logits      read        [N, V] f32 row-major (N rows, one per sequence being decoded)
//   2 rand        read        [N] f32 uniform numbers in [0, 1) drawn by the host
//   3 activeRows  read        [N] u32; rows with 0 are skipped when hasActive = 1 (bind any buffer otherwise)
//   4 ids         read_write  [N] u32, written (=) for active rows; inactive rows keep their values
//   5 logprob     read_write  [N] f32, written (=) for active rows; inactive rows keep their values
//
// Workgroup WG invocations (16, 64 or 256: GROUP · GROUP, set by the host; below, 256 and 16 stand for WG and
// GROUP), one workgroup per row; grid [x, y] with row = y * x_count + x covering N (folded into y past 65535).
// Deterministic: every reduction has a fixed order, no atomics. CPU rasterisers take 16: each barrier switches
// between all invocations of a workgroup there, and a row's work is the same whatever WG.
//
// Method. Probabilities are never normalised or sorted. Each logit maps to an order-preserving u32 key (sign
// flip; -0 as +0), and w = exp((z - zmax) / T) is its unnormalised probability, recomputed on every pass.
// Keys of z order tokens exactly as probabilities do, so both thresholds are searched in key space:
//   top-k: the largest key t with count(key >= t) >= k is the k-th largest key;
//   top-p: the largest key t >= t_k with mass(key >= t) >= topP * mass(key >= t_k).
// Each search step tests 4 candidate thresholds at once (vec4 compare; per invocation a count or mass, the
// smallest key >= each candidate and the largest key < it, over a strided slice of the row; then one tree
// reduction). The interval shrinks 5x per step and its ends snap to keys present in the row, so the search ends
// at 14 steps for 32 bits, or sooner, once one distinct key is left.
// The draw is a hierarchical inverse CDF: the row (then the chosen chunk, then its chosen sub-chunk) is cut into
// 256 contiguous chunks; each invocation sums its chunk; a monotone scan (16 serial groups of 16) finds the one
// chunk where the cumulative mass passes the goal. Chunks of ceil(V/256): 3 levels for V <= 16.7M (6 at WG 16).
// Cost per row, in passes over the V logits (each V/256 loads per invocation, strided so they coalesce, plus a
// 9-barrier reduction; the draw's first level reads contiguous chunks instead): argmax 1, full sum 1 (exp),
// top-k search (compares only), top-k mass 1 (exp, only with top-p), top-p search (exp), draw 1 (exp) plus two
// levels of <= ceil(V/256) elements. Greedy: 2 passes; temperature only: 3. Measured on normal(0, 3) logits,
// V = 4099 to 151936: top-k 40-1000 searches take 5-9 steps, top-p 0.9-0.95 searches 6-11, top-k 50 + top-p 0.9
// 11-16 passes in all.
//
// Assumptions: logits finite or -inf (masked; never drawn); no NaN; at least one finite logit per row;
// 0 < V < 2^24 (counts are exact in f32); topK in [1, V) or 0 = off; topP in (0, 1) or >= 1 = off.
// The mass sums are f32: where u * keptMass (or topP * mass) lies within f32 rounding of a CDF boundary, the
// token may differ from an exact computation's neighbour.

struct Params {
  N: u32,
  V: u32,
  invTemp: f32,
  greedy: u32,
  topK: u32,
  topP: f32,
  hasActive: u32,
}

@group(0) @binding(0) var<uniform> p: Params;
@group(0) @binding(1) var<storage, read> logits: array<f32>;
@group(0) @binding(2) var<storage, read> rand: array<f32>;
@group(0) @binding(3) var<storage, read> activeRows: array<u32>;
@group(0) @binding(4) var<storage, read_write> ids: array<u32>;
@group(0) @binding(5) var<storage, read_write> logprob: array<f32>;

const WG = {{WG}}u;
const GROUP = {{GROUP}}u; // the scan: GROUP groups of GROUP invocations (GROUP · GROUP = WG)
const NONE = 0xffffffffu;
const BLOCK = 64u; // terms summed apart before they join an invocation's running sum
// Above any f32 mass: makes a draw level fall back to its last chunk with mass.
const PAST_END = 3.0e38;

var<workgroup> red: array<vec4f, WG>;
var<workgroup> redAbove: array<vec4u, WG>;
var<workgroup> redBelow: array<vec4u, WG>;
var<workgroup> scan: array<f32, WG>;
var<workgroup> groupBase: array<f32, GROUP>;
var<workgroup> wLo: u32;
var<workgroup> wHi: u32;
var<workgroup> wStart: u32;
var<workgroup> wLen: u32;
var<workgroup> wTarget: f32;
var<workgroup> wFound: u32;

// Order-preserving key of a float: a < b exactly when keyOf(a) < keyOf(b); -0 and +0 share a key.
fn keyOf(x: f32) -> u32 {
  let b = select(bitcast<u32>(x), 0u, bitcast<u32>(x) == 0x80000000u);
  return select(b | 0x80000000u, ~b, (b & 0x80000000u) != 0u);
}

// Unnormalised probability exp((z - zmax) / T) in [0, 1]; exactly 0 for -inf and far below the maximum.
fn weight(z: f32, zmax: f32) -> f32 {
  let x = (z - zmax) * p.invTemp;
  return select(0.0, exp(x), x > -104.0);
}

// What one pass over the row learns about 4 candidate thresholds c: how many logits have key >= c (useMass
// false) or their mass (true); the smallest key >= c; the largest key < c (NONE / 0 when there is none).
struct Tally {
  total: vec4f,
  above: vec4u,
  below: vec4u,
}

// Sums in a fixed order, so a higher threshold never gets a larger total.
fn tally(tid: u32, base: u32, zmax: f32, cand: vec4u, useMass: bool) -> Tally {
  var acc = vec4f(0.0);
  var blk = vec4f(0.0);
  var n = 0u;
  var above = vec4u(NONE);
  var below = vec4u(0u);
  for (var i = tid; i < p.V; i += WG) {
    let z = logits[base + i];
    let k = vec4u(keyOf(z));
    let hit = k >= cand;
    above = select(above, min(above, k), hit);
    below = select(max(below, k), below, hit);
    if (hit.x) {
      let w = select(1.0, weight(z, zmax), useMass);
      blk += select(vec4f(0.0), vec4f(w), hit);
    }
    // Blocks of BLOCK terms, then their sums: an invocation's error grows with BLOCK + its count / BLOCK terms
    // instead of its count (Qwen's vocabulary at WG 16 is 9,496 per invocation).
    n++;
    if (n == BLOCK) {
      acc += blk;
      blk = vec4f(0.0);
      n = 0u;
    }
  }
  acc += blk;
  red[tid] = acc;
  redAbove[tid] = above;
  redBelow[tid] = below;
  for (var s = WG / 2u; s > 0u; s >>= 1u) {
    workgroupBarrier();
    if (tid < s) {
      red[tid] += red[tid + s];
      redAbove[tid] = min(redAbove[tid], redAbove[tid + s]);
      redBelow[tid] = max(redBelow[tid], redBelow[tid + s]);
    }
  }
  let t = Tally(workgroupUniformLoad(&red[0]), workgroupUniformLoad(&redAbove[0]), workgroupUniformLoad(&redBelow[0]));
  workgroupBarrier();
  return t;
}

// The largest key t in [lo, hi] with tally(t) >= need, given tally(lo) >= need and lo, hi keys of the row.
// Each step tests 4 candidates splitting [lo, hi] into 5 near-equal parts, then snaps the new bounds to keys
// present in the row (same tallies), so the search also ends once a single distinct key is left.
fn search(tid: u32, base: u32, zmax: f32, lo0: u32, hi0: u32, useMass: bool, need: f32) -> u32 {
  if (tid == 0u) {
    wLo = lo0;
    wHi = hi0;
  }
  var lo = lo0;
  loop {
    lo = workgroupUniformLoad(&wLo);
    let hi = workgroupUniformLoad(&wHi);
    workgroupBarrier();
    if (lo >= hi) {
      break;
    }
    let d = hi - lo;
    let g = d / 5u + 1u;
    let cand = vec4u(lo) + min(vec4u(1u, 2u, 3u, 4u) * g, vec4u(d));
    let t = tally(tid, base, zmax, cand, useMass);
    // ok is a prefix: totals fall as the threshold rises.
    let ok = t.total >= vec4f(need);
    if (tid == 0u) {
      if (ok.w) {
        wLo = t.above.w;
      } else if (ok.z) {
        wLo = t.above.z;
        wHi = t.below.w;
      } else if (ok.y) {
        wLo = t.above.y;
        wHi = t.below.z;
      } else if (ok.x) {
        wLo = t.above.x;
        wHi = t.below.y;
      } else {
        wHi = t.below.x;
      }
    }
  }
  return lo;
}

// Inclusive scan of one f32 per invocation into scan[]. Serial within 16 groups, then over the group totals:
// the result never decreases along the row, and stays equal across an invocation that adds exactly 0.
fn inclusiveScan(tid: u32, v: f32) {
  scan[tid] = v;
  workgroupBarrier();
  if (tid < GROUP) {
    var acc = 0.0;
    for (var j = 0u; j < GROUP; j++) {
      acc += scan[tid * GROUP + j];
      scan[tid * GROUP + j] = acc;
    }
  }
  workgroupBarrier();
  if (tid == 0u) {
    var acc = 0.0;
    for (var g = 0u; g < GROUP; g++) {
      groupBase[g] = acc;
      acc += scan[g * GROUP + GROUP - 1u];
    }
  }
  workgroupBarrier();
  scan[tid] = groupBase[tid / GROUP] + scan[tid];
  workgroupBarrier();
}

// Inverse CDF over the tokens with key >= thr, in index order: the first index whose cumulative mass exceeds
// u * keptMass. NONE when the row has no mass.
fn draw(tid: u32, base: u32, zmax: f32, thr: u32, u: f32) -> u32 {
  if (tid == 0u) {
    wStart = 0u;
    wLen = p.V;
    wTarget = -1.0;
  }
  var id = NONE;
  loop {
    let start = workgroupUniformLoad(&wStart);
    let len = workgroupUniformLoad(&wLen);
    var goal = workgroupUniformLoad(&wTarget);
    workgroupBarrier();
    if (tid == 0u) {
      wFound = NONE;
    }
    let chunk = (len + WG - 1u) / WG;
    let a = start + min(tid * chunk, len);
    let b = start + min(tid * chunk + chunk, len);
    var s = 0.0;
    var blk = 0.0;
    for (var i = a; i < b; i++) {
      let z = logits[base + i];
      if (keyOf(z) >= thr) {
        blk += weight(z, zmax);
      }
      if ((i - a) % BLOCK == BLOCK - 1u) {
        s += blk;
        blk = 0.0;
      }
    }
    s += blk;
    inclusiveScan(tid, s);
    let total = scan[WG - 1u];
    if (goal < 0.0) {
      goal = u * total;
    }
    let incl = scan[tid];
    let prev = select(0.0, scan[max(tid, 1u) - 1u], tid > 0u);
    // Exactly one invocation matches (the scan is monotone); past the end, the first to reach the total.
    var hit = prev <= goal && goal < incl;
    if (goal >= total) {
      hit = prev < total && incl == total;
    }
    if (hit) {
      wFound = tid;
      wTarget = select(PAST_END, goal - prev, goal < total);
    }
    let found = workgroupUniformLoad(&wFound);
    workgroupBarrier();
    if (found == NONE) {
      break;
    }
    if (chunk == 1u) {
      id = start + found;
      break;
    }
    if (tid == 0u) {
      wStart = start + found * chunk;
      wLen = min(chunk, len - found * chunk);
    }
  }
  return id;
}

@compute @workgroup_size(WG)
fn main(@builtin(workgroup_id) wg: vec3u, @builtin(num_workgroups) nwg: vec3u,
        @builtin(local_invocation_index) tid: u32) {
  let row = wg.y * nwg.x + wg.x;
  if (row >= p.N) {
    return;
  }
  if (p.hasActive != 0u && activeRows[row] == 0u) {
    return;
  }
  let base = row * p.V;

  // Argmax (largest key, first index) and the smallest key.
  var best = 0u;
  var bestIdx = NONE;
  var least = NONE;
  for (var i = tid; i < p.V; i += WG) {
    let k = keyOf(logits[base + i]);
    if (k > best) {
      best = k;
      bestIdx = i;
    }
    least = min(least, k);
  }
  redAbove[tid] = vec4u(best, bestIdx, least, 0u);
  for (var s = WG / 2u; s > 0u; s >>= 1u) {
    workgroupBarrier();
    if (tid < s) {
      let mine = redAbove[tid];
      let other = redAbove[tid + s];
      let take = other.x > mine.x || (other.x == mine.x && other.y < mine.y);
      redAbove[tid] = vec4u(select(mine.xy, other.xy, take), min(mine.z, other.z), 0u);
    }
  }
  let top = workgroupUniformLoad(&redAbove[0]);
  workgroupBarrier();
  let maxKey = top.x;
  let argmax = top.y;
  let minKey = top.z;
  let zmax = logits[base + argmax];

  // Full softmax denominator (in units of exp(0) at the maximum).
  let sumAll = tally(tid, base, zmax, vec4u(0u), true).total.x;
  let logSum = log(sumAll);
  if (p.greedy != 0u) {
    if (tid == 0u) {
      ids[row] = argmax;
      logprob[row] = -logSum;
    }
    return;
  }

  var thr = minKey;
  if (p.topK != 0u) {
    thr = search(tid, base, zmax, minKey, maxKey, false, f32(p.topK));
  }
  if (p.topP < 1.0) {
    var massK = sumAll;
    if (p.topK != 0u) {
      massK = tally(tid, base, zmax, vec4u(thr), true).total.x;
    }
    thr = search(tid, base, zmax, thr, maxKey, true, p.topP * massK);
  }

  var id = draw(tid, base, zmax, thr, rand[row]);
  if (id == NONE) {
    id = argmax;
  }
  if (tid == 0u) {
    ids[row] = id;
    logprob[row] = (logits[base + id] - zmax) * p.invTemp - logSum;
  }
}
