// Pieces of grouped-query attention shared by attention_forward.wgsl and attention_backward.wgsl: each of those
// holds the slot ATTENTION_COMMON, which src/ops/attention.ts fills with this text when it imports them, before
// the template values go in (so the slots used here, BK, LANES, BQ and REG_INIT / REG_STEP / REG_SAVE, are filled
// like the host's own). A piece, not a shader: no entry point of its own.
//
// Bindings (group 0) 0-5 of both hosts, the inputs they share; the hosts declare the rest:
//   0 p        uniform     Params (splits: the forward's key chunks; the backward reads none)
//   1 q        read        [T, H, D] f32
//   2 k        read        [S, KV, D] KS: f32, or in the forward an f16 cache as u32 words of two halves, vec4 rows
//                          for main_lane (see attention_forward.wgsl); read through kAt
//   3 v        read        [S, KV, D] like k, read through vAt
//   4 kvStart  read        [T] u32: first key row of each query
//   5 kvEnd    read        [T] u32: one past its last key row
// Compile-time constants D (head dim) and WG (invocations per workgroup) and the template slots KS and KV_LOAD
// (kAt and vAt, from src/ops/attention.ts) are filled per pipeline.
//
// Workgroup memory of the tiled entry points: aTile and bTile [BK, D] f32 (the forward's main_tile and the
// backward's main_dq_tile stage K rows in aTile and V rows in bTile; main_dkv_tile stages q and dO rows), and the
// range reduction's 8 · WG + 8 bytes. The register walk needs subgroups of exactly LANES invocations.

struct Params {
  T: u32,
  H: u32,
  KV: u32,
  S: u32,
  scale: f32,
  splits: u32,
}

@group(0) @binding(0) var<uniform> p: Params;
@group(0) @binding(1) var<storage, read> q: array<f32>;
@group(0) @binding(2) var<storage, read> k: array<{{KS}}>;
@group(0) @binding(3) var<storage, read> v: array<{{KS}}>;
@group(0) @binding(4) var<storage, read> kvStart: array<u32>;
@group(0) @binding(5) var<storage, read> kvEnd: array<u32>;

// Element i of k and v as f32 (kAt, vAt).
{{KV_LOAD}}

const D = {{D}}u;
const WG = {{WG}}u;
const BK = {{BK}}u;
const LANES = {{LANES}}u;
const LOG2E = 1.4426950408889634;

// Index of invocation li among all invocations of the grid (workgroup wg.x + wg.y · nwg.x, WG invocations each).
fn linearId(wg: vec3u, nwg: vec3u, li: u32) -> u32 {
  return (wg.y * nwg.x + wg.x) * WG + li;
}

// The query row of invocation li in a row kernel (main, main_lane, main_dq: one invocation per (row, head), grid
// foldGrid(ceil(T · H / WG))): row = t · H + h indexes q, o and lse, kvh is head h's kv head; row >= T · H past
// the last row.
struct QueryRow {
  row: u32,
  t: u32,
  kvh: u32,
}

fn queryRow(wg: vec3u, nwg: vec3u, li: u32) -> QueryRow {
  let row = linearId(wg, nwg, li);
  return QueryRow(row, row / p.H, (row % p.H) / (p.H / p.KV));
}

var<workgroup> aTile: array<f32, BK * D>;
var<workgroup> bTile: array<f32, BK * D>;
var<workgroup> rangeLo: array<u32, WG>;
var<workgroup> rangeHi: array<u32, WG>;
var<workgroup> blockLo: u32;
var<workgroup> blockHi: u32;

// The union [lo, hi) of the invocations' ranges [a, b), empty ones ignored (lo >= hi when all are empty).
// Called by the whole workgroup; the result is uniform.
fn blockRange(li: u32, a: u32, b: u32) -> vec2u {
  rangeLo[li] = select(0xffffffffu, a, a < b);
  rangeHi[li] = select(0u, b, a < b);
  workgroupBarrier();
  if (li == 0u) {
    var lo = 0xffffffffu;
    var hi = 0u;
    for (var i = 0u; i < WG; i++) {
      lo = min(lo, rangeLo[i]);
      hi = max(hi, rangeHi[i]);
    }
    blockLo = lo;
    blockHi = hi;
  }
  return vec2u(workgroupUniformLoad(&blockLo), workgroupUniformLoad(&blockHi));
}

// The query row of invocation li in a query tile (main_tile, main_dq_tile): workgroup w = wg.x + wg.y · nwg.x
// handles query rows [(w / H) · WG, +WG) of head w % H (grid foldGrid(ceil(T / WG) · H)). row = t · H + h indexes
// q, o and lse; [j0, j1) is the row's key range, empty for an invocation past T (valid = false).
struct TileRow {
  t: u32,
  h: u32,
  kvh: u32,
  row: u32,
  valid: bool,
  j0: u32,
  j1: u32,
}

fn tileRow(wg: vec3u, nwg: vec3u, li: u32) -> TileRow {
  let w = wg.y * nwg.x + wg.x;
  let h = w % p.H;
  let t = (w / p.H) * WG + li;
  var r = TileRow(t, h, h / (p.H / p.KV), t * p.H + h, t < p.T, 0u, 0u);
  if (r.valid) {
    r.j0 = kvStart[t];
    r.j1 = min(kvEnd[t], p.S);
  }
  return r;
}

// Stages key rows [jt, min(jt + BK, end)) of kv head kvh, K rows in aTile and V rows in bTile, and returns how many.
// Called by the whole workgroup with uniform jt and end; the tiles are complete on return.
fn loadKeyTile(li: u32, jt: u32, end: u32, kvh: u32) -> u32 {
  let n = min(BK, end - jt);
  for (var e = li; e < n * D; e += WG) {
    let at = ((jt + e / D) * p.KV + kvh) * D + e % D;
    aTile[e] = kAt(at);
    bTile[e] = vAt(at);
  }
  workgroupBarrier();
  return n;
}

// The tile rows [x, y) of a tile of n keys from jt that lie in the row's own key range (x >= y when none do).
fn ownKeys(r: TileRow, jt: u32, n: u32) -> vec2u {
  return vec2u(max(r.j0, jt) - jt, select(0u, min(r.j1, jt + n) - jt, r.j1 > jt));
}

// The query-row register walk, the whole body of the forward's main_reg and the backward's main_dq_reg: workgroup
// w = wg.x + wg.y · nwg.x serves kv head w % KV, and lane `lane` owns BQ of that kv head's query rows from fBase (see
// the hosts' headers). The slots are the host's generated blocks (src/ops/attention_reg.ts): REG_INIT holds the rows
// in named registers and defines the walk's bounds lo, hi; REG_STEP takes BJ keys and advances j to the next key in
// some lane's range; REG_SAVE writes the rows.
fn queryRegWalk(wg: vec3u, nwg: vec3u, lane: u32) {
  let G = p.H / p.KV;
  let w = wg.y * nwg.x + wg.x;
  let kvh = w % p.KV;
  let fBase = (w / p.KV) * (LANES * {{BQ}}u);
  let lastT = max(p.T, 1u) - 1u;
  let scale = p.scale * LOG2E;
  {{REG_INIT}}
  for (var j = lo; j < hi;) {
    {{REG_STEP}}
  }
  {{REG_SAVE}}
}
