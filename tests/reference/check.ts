/**
 * The one checker of GPU results against references: an element fails when |gpu - ref| > atol + rtol * |ref|.
 * On failure the message gives the worst index and the first few elements side by side.
 */

/** Tolerances of one comparison. */
export interface Tolerance {
  atol: number;
  rtol: number;
}

/** Per-dtype tolerances for elementwise ops (a few ulps of f32, f16 storage rounding). */
export const ELEMENTWISE: Record<"f32" | "f16", Tolerance> = {
  f32: { atol: 1e-6, rtol: 1e-5 },
  f16: { atol: 1e-3, rtol: 2e-3 },
};

/** Throws an AssertionError-like Error when any element is outside the tolerance or not finite where ref is. */
export function assertClose(
  name: string,
  gpu: ArrayLike<number>,
  ref: ArrayLike<number>,
  tol: Tolerance,
): void {
  if (gpu.length !== ref.length) throw new Error(`${name}: length ${gpu.length} differs from reference ${ref.length}`);
  let worst = -1;
  let worstExcess = 0;
  let failures = 0;
  for (let i = 0; i < ref.length; i++) {
    const g = gpu[i];
    const r = ref[i];
    const diff = Math.abs(g - r);
    const limit = tol.atol + tol.rtol * Math.abs(r);
    const bad = !(diff <= limit) && !(Object.is(g, r));
    if (bad) {
      failures++;
      const excess = Number.isFinite(diff) ? diff / limit : Infinity;
      if (worst < 0 || excess > worstExcess) {
        worst = i;
        worstExcess = excess;
      }
    }
  }
  if (failures === 0) return;
  const rows = [`${name}: ${failures} of ${ref.length} elements outside atol ${tol.atol} + rtol ${tol.rtol}·|ref|`];
  rows.push(`  worst at [${worst}]: gpu ${gpu[worst]} ref ${ref[worst]} (|diff| ${Math.abs(gpu[worst] - ref[worst])})`);
  rows.push("  index        gpu                  ref");
  for (let i = 0; i < Math.min(8, ref.length); i++) {
    rows.push(`  ${String(i).padEnd(12)} ${String(gpu[i]).padEnd(20)} ${ref[i]}`);
  }
  throw new Error(rows.join("\n"));
}

/** Largest absolute value, for scaling matmul tolerances by the size of the inputs. */
export function maxAbs(xs: ArrayLike<number>): number {
  let m = 0;
  for (let i = 0; i < xs.length; i++) m = Math.max(m, Math.abs(xs[i]));
  return m;
}
