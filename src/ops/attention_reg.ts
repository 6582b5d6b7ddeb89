/**
 * Straight-line WGSL for the register-blocked attention entry points (`main_reg` of the forward, `main_dq_reg` and
 * `main_dkv_reg` of the backward): these functions fill their `{{..._INIT}}`, `{{..._STEP}}` and `{{..._SAVE}}`
 * slots. Deno compiles every shader with forced loop bounding and index clamping, so Mesa keeps neither loops over
 * a register block unrolled nor arrays in registers: blocks are written out as named scalars.
 *
 * Cost model (lavapipe; the measured costs are in docs/kernel-timings.md): a storage or workgroup load of a
 * subgroup costs about a hundred FMAs, uniform address or not (so do vec4 loads, per component), and a loop
 * iteration about as much as a load; subgroupBroadcast costs about one FMA. So the lanes load the rows they share
 * together, one element each, and hand the values around with subgroupBroadcast: one load serves 8 elements.
 */
import { range, slotLines } from "./wgsl.ts";

/** Shape of a register block. */
export interface RegBlock {
  /** Head dimension. */
  D: number;
  /** Rows per lane: query rows (forward, dq; BQ) or key rows (dk/dv; BK). */
  rows: number;
  /** Per step: keys of the forward and dq (BJ), query tokens of dk/dv (BF). */
  keys: number;
  /** Invocations per workgroup: exactly one subgroup. */
  lanes: number;
  /** k and v are f16 stored as u32 words of two halves (forward only): one load brings two elements. */
  packed?: boolean;
}

/**
 * Lines defining `let {name}{e}` for e < count: element e of a block at element offset `addr(e)` (a WGSL u32
 * expression of the element index). Lane l loads elements l, l + lanes, ... (clamped to the block) and every lane
 * gets each element by subgroupBroadcast.
 */
function blockLoad(
  name: string,
  count: number,
  lanes: number,
  load: (offset: string) => string,
  addr: (e: string) => string,
): string[] {
  const out: string[] = [];
  for (const g of range(Math.ceil(count / lanes))) {
    const e = count - g * lanes >= lanes ? `${g * lanes}u + lane` : `min(${g * lanes}u + lane, ${count - 1}u)`;
    out.push(`let ${name}g${g} = ${load(addr(`(${e})`))};`);
  }
  for (const e of range(count)) {
    out.push(`let ${name}${e} = subgroupBroadcast(${name}g${Math.floor(e / lanes)}, ${e % lanes}u);`);
  }
  return out;
}

/** Σ a(i) · b(i) over i < n as one fma chain. */
function dot(n: number, a: (i: number) => string, b: (i: number) => string): string {
  let s = `${a(0)} * ${b(0)}`;
  for (let i = 1; i < n; i++) s = `fma(${a(i)}, ${b(i)}, ${s})`;
  return s;
}

/** `lo`, `hi`: the union of the lanes' non-empty ranges [a_r, b_r) (lo >= hi when every range is empty). */
function laneUnion(n: number, a: (r: number) => string, b: (r: number) => string): string[] {
  const lo = range(n).map((r) => `select(0xffffffffu, ${a(r)}, ${a(r)} < ${b(r)})`);
  const hi = range(n).map((r) => `select(0u, ${b(r)}, ${a(r)} < ${b(r)})`);
  return [
    `let lo = subgroupMin(${lo.reduce((x, y) => `min(${x}, ${y})`)});`,
    `let hi = subgroupMax(${hi.reduce((x, y) => `max(${x}, ${y})`)});`,
  ];
}

/**
 * `{v} =` the smallest index >= {v} + step inside some lane's range [a_r, b_r), or 0xffffffff: the walk covers the
 * union of the ranges and jumps the gaps between them (decoding, where the lanes' queries sit in different slots).
 */
function nextIndex(v: string, step: number, n: number, a: (r: number) => string, b: (r: number) => string): string[] {
  const cand = range(n).map((r) => `select(0xffffffffu, max(${v}Next, ${a(r)}), ${v}Next < ${b(r)})`);
  return [`let ${v}Next = ${v} + ${step}u;`, `${v} = subgroupMin(${cand.reduce((x, y) => `min(${x}, ${y})`)});`];
}

/**
 * Per-lane query rows r < BQ of the forward and dq: f = fBase + r · LANES + lane among the T · G rows of kv head kvh
 * (f = t · G + g), their token t, row t · H + kvh · G + g, and key range [js, je) (empty past the last row).
 */
function queryRows(bq: number): string[] {
  const out: string[] = [];
  for (const r of range(bq)) {
    out.push(
      `let f${r} = fBase + ${r}u * LANES + lane;`,
      `let in${r} = f${r} < p.T * G;`,
      `let t${r} = min(f${r} / G, lastT);`,
      `let row${r} = t${r} * p.H + kvh * G + f${r} % G;`,
      `let js${r} = select(0u, kvStart[t${r}], in${r});`,
      `let je${r} = select(0u, min(kvEnd[t${r}], p.S), in${r});`,
    );
  }
  return out;
}

/**
 * Rows j .. j + BJ - 1 (clamped to hi - 1) of k or v for kv head kvh, as `{which}{b · D + d}`. Packed, lane l loads
 * words l, l + lanes, ... of the block (word w holds elements 2w and 2w + 1 of one row: D is even) and each word is
 * broadcast once as a vec2.
 */
function keyBlock(c: RegBlock, which: "k" | "v"): string[] {
  const { D, keys, lanes } = c;
  if (!c.packed) {
    const addr = (e: string) => `(min(j + ${e} / ${D}u, hi - 1u) * p.KV + kvh) * D + ${e} % ${D}u`;
    return blockLoad(which, keys * D, lanes, (o) => `f32(${which}[${o}])`, addr);
  }
  const half = D / 2;
  const addr = (w: string) => `(min(j + ${w} / ${half}u, hi - 1u) * p.KV + kvh) * ${half}u + ${w} % ${half}u`;
  const out = blockLoad(`${which}w`, keys * half, lanes, (o) => `unpack2x16float(${which}[${o}])`, addr);
  for (const w of range(keys * half)) {
    out.push(`let ${which}${2 * w} = ${which}w${w}.x;`, `let ${which}${2 * w + 1} = ${which}w${w}.y;`);
  }
  return out;
}

/**
 * Register names of one query row of the forward: `main_reg` suffixes them with the lane's row r (`q0_5`, `m0`),
 * `main_lane` has one row and no suffix (`q5`, `m`).
 */
type RowNames = (base: string, i?: number) => string;

const regRow = (r: number): RowNames => (base, i) => i === undefined ? `${base}${r}` : `${base}${r}_${i}`;
const laneRow: RowNames = (base, i) => `${base}${i ?? ""}`;

/** A query row's q (scaled to log2 units), running max m, sum l and output accumulator o, for row index `row`. */
function softmaxInit(D: number, n: RowNames, row: string): string[] {
  const out = range(D).map((d) => `let ${n("q", d)} = q[${row} * D + ${d}u] * scale;`);
  out.push(`var ${n("m")} = NEG;`, `var ${n("l")} = 0.0;`);
  for (const d of range(D)) out.push(`var ${n("o", d)} = 0.0;`);
  return out;
}

/**
 * One online-softmax step of a row over the BJ loaded keys `k{b · D + d}`, key b counted where `ok(b)` holds:
 * scores, the new max, the rescale `a` and weights `e`, and l and m updated.
 */
function softmaxScores(D: number, bj: number, n: RowNames, ok: (b: number) => string): string[] {
  const out: string[] = [];
  for (const b of range(bj)) {
    out.push(
      `let ${n("ok", b)} = ${ok(b)};`,
      `let ${n("s", b)} = ${dot(D, (d) => n("q", d), (d) => `k${b * D + d}`)};`,
    );
  }
  // Scores are in log2 units (q was scaled by scale · log2 e); a key not counted weighs exactly 0.
  const mx = range(bj).map((b) => `select(NEG, ${n("s", b)}, ${n("ok", b)})`).reduce((x, y) => `max(${x}, ${y})`);
  out.push(`let ${n("mx")} = max(${n("m")}, ${mx});`, `let ${n("a")} = exp2(${n("m")} - ${n("mx")});`);
  for (const b of range(bj)) {
    out.push(`let ${n("e", b)} = select(0.0, exp2(${n("s", b)} - ${n("mx")}), ${n("ok", b)});`);
  }
  const sum = range(bj).map((b) => n("e", b)).join(" + ");
  out.push(`${n("l")} = fma(${n("l")}, ${n("a")}, ${sum});`, `${n("m")} = ${n("mx")};`);
  return out;
}

/** o = o · a + Σ_b e_b · v_b over the BJ loaded value rows `v{b · D + d}`. */
function softmaxAccumulate(D: number, bj: number, n: RowNames): string[] {
  return range(D).map((d) => {
    let x = `${n("o", d)} * ${n("a")}`;
    for (const b of range(bj)) x = `fma(${n("e", b)}, v${b * D + d}, ${x})`;
    return `${n("o", d)} = ${x};`;
  });
}

/** o / l and the log-sum-exp (natural log) of row index `row`; 0 for a row that counted no key. */
function softmaxSave(D: number, n: RowNames, row: string): string[] {
  return [
    `let ${n("inv")} = select(0.0, 1.0 / ${n("l")}, ${n("l")} > 0.0);`,
    ...range(D).map((d) => `o[${row} * D + ${d}u] = ${n("o", d)} * ${n("inv")};`),
    `lse[${row}] = select(0.0, (${n("m")} + log2(${n("l")})) * LN2, ${n("l")} > 0.0);`,
  ];
}

/** Slots of the forward's `main_reg`: lanes own query rows, all lanes walk the same keys, online softmax. */
export function forwardRegSlots(c: RegBlock): Record<string, string> {
  const { D, rows: bq, keys: bj } = c;
  const init = queryRows(bq);
  for (const r of range(bq)) init.push(...softmaxInit(D, regRow(r), `row${r}`));
  init.push(...laneUnion(bq, (r) => `js${r}`, (r) => `je${r}`));
  const step = keyBlock(c, "k");
  for (const r of range(bq)) {
    step.push(...softmaxScores(D, bj, regRow(r), (b) => `j + ${b}u >= js${r} && j + ${b}u < je${r}`));
  }
  step.push(...keyBlock(c, "v"));
  for (const r of range(bq)) step.push(...softmaxAccumulate(D, bj, regRow(r)));
  step.push(...nextIndex("j", bj, bq, (r) => `js${r}`, (r) => `je${r}`));
  const save: string[] = [];
  for (const r of range(bq)) {
    save.push(`if (in${r}) {`, ...softmaxSave(D, regRow(r), `row${r}`).map((l) => `  ${l}`), `}`);
  }
  return { REG_INIT: slotLines(init, 2), REG_STEP: slotLines(step, 4), REG_SAVE: slotLines(save, 2) };
}

/**
 * Slots of the backward's `main_dq_reg`: lanes own query rows, all lanes walk the same keys. Also writes each
 * row's (kvStart, kvEnd, lse · log2 e, δ) to `delta` for `main_dkv_reg`.
 */
export function dqRegSlots(c: RegBlock): Record<string, string> {
  const { D, rows: bq, keys: bj } = c;
  const init = queryRows(bq);
  for (const r of range(bq)) {
    for (const d of range(D)) {
      init.push(`let q${r}_${d} = q[row${r} * D + ${d}u] * scale;`, `let g${r}_${d} = dO[row${r} * D + ${d}u];`);
    }
    init.push(
      `let dl${r} = ${dot(D, (d) => `g${r}_${d}`, (d) => `o[row${r} * D + ${d}u]`)};`,
      `let lse${r} = lse[row${r}] * LOG2E;`,
      `if (in${r}) {`,
      `  delta[row${r} * 4u] = js${r};`,
      `  delta[row${r} * 4u + 1u] = je${r};`,
      `  delta[row${r} * 4u + 2u] = bitcast<u32>(lse${r});`,
      `  delta[row${r} * 4u + 3u] = bitcast<u32>(dl${r});`,
      `}`,
    );
    for (const d of range(D)) init.push(`var acc${r}_${d} = 0.0;`);
  }
  init.push(...laneUnion(bq, (r) => `js${r}`, (r) => `je${r}`));
  const step = [...keyBlock(c, "k"), ...keyBlock(c, "v")];
  for (const r of range(bq)) {
    for (const b of range(bj)) {
      step.push(
        `let ok${r}_${b} = j + ${b}u >= js${r} && j + ${b}u < je${r};`,
        `let s${r}_${b} = ${dot(D, (d) => `q${r}_${d}`, (d) => `k${b * D + d}`)};`,
        `let dp${r}_${b} = ${dot(D, (d) => `g${r}_${d}`, (d) => `v${b * D + d}`)};`,
        `let ds${r}_${b} = select(0.0, exp2(s${r}_${b} - lse${r}), ok${r}_${b}) * (dp${r}_${b} - dl${r});`,
      );
    }
    for (const d of range(D)) {
      let x = `acc${r}_${d}`;
      for (const b of range(bj)) x = `fma(ds${r}_${b}, k${b * D + d}, ${x})`;
      step.push(`acc${r}_${d} = ${x};`);
    }
  }
  step.push(...nextIndex("j", bj, bq, (r) => `js${r}`, (r) => `je${r}`));
  const save: string[] = [];
  for (const r of range(bq)) {
    save.push(`if (in${r}) {`, ...range(D).map((d) => `  dq[row${r} * D + ${d}u] = acc${r}_${d} * p.scale;`), `}`);
  }
  return { REG_INIT: slotLines(init, 2), REG_STEP: slotLines(step, 4), REG_SAVE: slotLines(save, 2) };
}

/**
 * Slots of the backward's `main_dkv_reg`: lanes own key rows j = jBase + r · LANES + lane; all lanes walk the same
 * query tokens, BF per step (i .. i + BF - 1, past T masked), with head g of the group: each query row is loaded
 * once per workgroup.
 */
export function dkvRegSlots(c: RegBlock): Record<string, string> {
  const { D, rows: bk, keys: bf, lanes } = c;
  const init: string[] = [];
  for (const r of range(bk)) {
    init.push(
      `let j${r} = jBase + ${r}u * LANES + lane;`,
      `let kin${r} = j${r} < p.S;`,
      `let id${r} = min(j${r}, lastS) * p.KV + kvh;`,
      `let qs${r} = select(0u, qStart[min(j${r}, lastS)], kin${r});`,
      `let qe${r} = select(0u, min(qEnd[min(j${r}, lastS)], p.T), kin${r});`,
    );
    for (const d of range(D)) {
      init.push(`let k${r}_${d} = k[id${r} * D + ${d}u] * scale;`, `let v${r}_${d} = v[id${r} * D + ${d}u];`);
    }
    for (const d of range(D)) init.push(`var gk${r}_${d} = 0.0;`, `var gv${r}_${d} = 0.0;`);
  }
  init.push(...laneUnion(bk, (r) => `qs${r}`, (r) => `qe${r}`));
  const step: string[] = [];
  for (const x of range(bf)) {
    step.push(`let row${x} = min(i + ${x}u, lastT) * p.H + kvh * G + g;`);
    step.push(...blockLoad(`x${x}_`, 4, lanes, (o) => `delta[${o}]`, (e) => `row${x} * 4u + ${e}`));
    step.push(...blockLoad(`qq${x}_`, D, lanes, (o) => `q[${o}]`, (e) => `row${x} * D + ${e}`));
    step.push(...blockLoad(`gg${x}_`, D, lanes, (o) => `dO[${o}]`, (e) => `row${x} * D + ${e}`));
    step.push(`let xl${x} = bitcast<f32>(x${x}_2);`, `let xd${x} = bitcast<f32>(x${x}_3);`);
  }
  for (const r of range(bk)) {
    for (const x of range(bf)) {
      const past = x === 0 ? "" : ` && i + ${x}u < p.T`;
      step.push(
        `let ok${r}_${x} = kin${r} && j${r} >= x${x}_0 && j${r} < x${x}_1${past};`,
        `let s${r}_${x} = ${dot(D, (d) => `qq${x}_${d}`, (d) => `k${r}_${d}`)};`,
        `let dp${r}_${x} = ${dot(D, (d) => `gg${x}_${d}`, (d) => `v${r}_${d}`)};`,
        `let p${r}_${x} = select(0.0, exp2(s${r}_${x} - xl${x}), ok${r}_${x});`,
        `let ds${r}_${x} = p${r}_${x} * (dp${r}_${x} - xd${x});`,
      );
    }
    for (const d of range(D)) {
      let gv = `gv${r}_${d}`, gk = `gk${r}_${d}`;
      for (const x of range(bf)) {
        gv = `fma(p${r}_${x}, gg${x}_${d}, ${gv})`;
        gk = `fma(ds${r}_${x}, qq${x}_${d}, ${gk})`;
      }
      step.push(`gv${r}_${d} = ${gv};`, `gk${r}_${d} = ${gk};`);
    }
  }
  const save: string[] = [];
  for (const r of range(bk)) {
    save.push(
      `if (kin${r}) {`,
      ...range(D).map((d) => `  dk[id${r} * D + ${d}u] = gk${r}_${d} * p.scale;`),
      ...range(D).map((d) => `  dv[id${r} * D + ${d}u] = gv${r}_${d};`),
      `}`,
    );
  }
  return {
    DKV_INIT: slotLines(init, 2),
    DKV_STEP: slotLines(step, 6),
    DKV_NEXT: slotLines(nextIndex("i", bf, bk, (r) => `qs${r}`, (r) => `qe${r}`), 4),
    DKV_SAVE: slotLines(save, 2),
  };
}

/** Shape of the lane kernel: one invocation per query row, walking its own keys. */
export interface LaneBlock {
  /** Head dimension. */
  D: number;
  /** Keys per step (BJ). */
  keys: number;
  /** k and v are f16 stored as u32 words of two halves. */
  packed?: boolean;
  /** Bound as vec4s: 4 f32 or, packed, 8 halves a load (D a multiple of 4, packed of 8). */
  wide?: boolean;
}

/**
 * Rows j .. j + BJ - 1 (clamped to je - 1) of k or v for kv head kvh, loaded by this lane alone, as
 * `{which}{b · D + d}`.
 */
function ownKeyBlock(c: LaneBlock, which: "k" | "v"): string[] {
  const { D, keys } = c;
  // Elements per stored word (2 halves when packed) and words per load (a vec4 when wide).
  const half = c.packed ? 2 : 1, words = c.wide ? 4 : 1, per = half * words;
  const out: string[] = [];
  for (const b of range(keys)) {
    const base = `${which}b${b}`;
    out.push(`let ${base} = (min(j + ${b}u, last) * p.KV + kvh) * ${D / per}u;`);
    for (const q of range(D / per)) {
      const load = `${which}[${base} + ${q}u]`;
      let parts = [load];
      if (c.wide) {
        out.push(`let ${which}q${b}_${q} = ${load};`);
        parts = [..."xyzw"].map((x) => `${which}q${b}_${q}.${x}`);
      }
      parts.forEach((v, i) => {
        const w = q * words + i, e = b * D + w * half;
        if (!c.packed) {
          out.push(`let ${which}${e} = f32(${v});`);
        } else {
          out.push(
            `let ${which}w${b}_${w} = unpack2x16float(${v});`,
            `let ${which}${e} = ${which}w${b}_${w}.x;`,
            `let ${which}${e + 1} = ${which}w${b}_${w}.y;`,
          );
        }
      });
    }
  }
  return out;
}

/**
 * Slots of the forward's `main_lane`: each invocation owns one query row and walks its own key range [js, je), BJ
 * keys per step, loading every K and V element it uses itself; online softmax in named registers. Made for
 * decoding on CPU rasterisers, where neighbouring rows sit in different cache slots: a subgroup load costs the same
 * whether its lanes share an address or not, so loading per lane wastes nothing, while walking the union of the
 * lanes' ranges (main_reg) multiplies the arithmetic by the lanes whose range a key is outside.
 */
export function forwardLaneSlots(c: LaneBlock): Record<string, string> {
  const { D, keys: bj } = c;
  const step = [
    ...ownKeyBlock(c, "k"),
    ...softmaxScores(D, bj, laneRow, (b) => `j + ${b}u < je`),
    ...ownKeyBlock(c, "v"),
    ...softmaxAccumulate(D, bj, laneRow),
  ];
  return {
    LANE_INIT: slotLines(softmaxInit(D, laneRow, "row"), 2),
    LANE_STEP: slotLines(step, 4),
    LANE_SAVE: slotLines(softmaxSave(D, laneRow, "row"), 2),
  };
}
