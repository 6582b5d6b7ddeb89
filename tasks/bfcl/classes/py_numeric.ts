/**
 * The two arbitrary-precision results of BFCL's MathAPI, reproduced with BigInt:
 *
 * - `mpmathLogRatio`: `mpmath.mp.dps = d; mpmath.log(x) / mpmath.log(b)` as its repr (`mpf('1.3027')`). mpmath works
 *   in binary at prec = round((d + 1) * log2(10)) bits: each log is rounded to prec bits, then the quotient is, and
 *   the repr shows prec_to_dps(prec) + 3 digits (17 when that is 15) with trailing zeros stripped. Because of the
 *   per-step rounding a low precision gives `mpf('3.000000000029')` for log(8)/log(2); only this replay matches.
 * - `decimalSqrt`: `getcontext().prec = p; Decimal(x).sqrt()` as its repr (`Decimal('1.414213562')`), following the
 *   General Decimal Arithmetic square root (exact results keep the ideal exponent, others round half-even to p
 *   digits) and Decimal's own str() (scientific when the exponent is positive or the number is tiny).
 *
 * Hand-written: no npm package reproduces mpmath's per-step binary rounding or Python's Decimal text.
 */

/** The largest precision computed (Python would take minutes for millions of digits; a server must not). */
export const MAX_DIGITS = 5000;

/** A binary float with `prec`-bit mantissa: value = man * 2^exp (man 0 for zero). */
interface Mpf {
  man: bigint;
  exp: number;
  special?: "+inf" | "-inf" | "nan";
}

function bitLength(n: bigint): number {
  return n === 0n ? 0 : (n < 0n ? -n : n).toString(2).length;
}

/** num / den rounded to `prec` significant bits, half to even. */
function roundRational(num: bigint, den: bigint, prec: number): Mpf {
  if (num === 0n) return { man: 0n, exp: 0 };
  const neg = (num < 0n) !== (den < 0n);
  let n = num < 0n ? -num : num;
  let d = den < 0n ? -den : den;
  // Scale so the integer quotient has prec + 2 or more bits.
  const shift = prec + 2 - (bitLength(n) - bitLength(d));
  if (shift > 0) n <<= BigInt(shift);
  else d <<= BigInt(-shift);
  let q = n / d;
  const sticky = n % d !== 0n;
  let exp = -shift;
  const extra = bitLength(q) - prec;
  if (extra > 0) {
    const mask = (1n << BigInt(extra)) - 1n;
    const rem = q & mask;
    const half = 1n << BigInt(extra - 1);
    q >>= BigInt(extra);
    exp += extra;
    if (rem > half || (rem === half && (sticky || (q & 1n) === 1n))) q += 1n;
    if (bitLength(q) > prec) {
      q >>= 1n;
      exp += 1;
    }
  }
  return { man: neg ? -q : q, exp };
}

/** The exact value of a finite JS number as num / 2^k (k >= 0). */
function exactBinary(x: number): [bigint, number] {
  if (Number.isInteger(x)) return [BigInt(x), 0];
  let k = 0;
  while (!Number.isInteger(x)) {
    x *= 2;
    k++;
  }
  return [BigInt(x), k];
}

/** atanh(p / q) * 2^w, as a fixed-point integer (|p/q| <= 1/3 for fast convergence). */
function atanhFixed(p: bigint, q: bigint, w: bigint): bigint {
  const t = (p << w) / q;
  const t2 = (t * t) >> w;
  let term = t;
  let sum = 0n;
  for (let k = 1n; term !== 0n; k += 2n) {
    sum += term / k;
    term = (term * t2) >> w;
  }
  return sum;
}

/** ln(num / 2^k) * 2^w for positive num. */
function lnFixed(num: bigint, k: number, w: bigint): bigint {
  const bits = bitLength(num);
  const top = 1n << BigInt(bits - 1);
  const lnMant = 2n * atanhFixed(num - top, num + top, w);
  const ln2 = 2n * atanhFixed(1n, 3n, w);
  return lnMant + BigInt(bits - 1 - k) * ln2;
}

/** pi * 2^w by Machin's formula. */
function piFixed(w: bigint): bigint {
  const atanInv = (n: bigint): bigint => {
    const x = (1n << w) / n;
    const n2 = n * n;
    let term = x;
    let sum = 0n;
    for (let k = 1n, sign = 1n; term !== 0n; k += 2n, sign = -sign) {
      sum += sign * (term / k);
      term /= n2;
    }
    return sum;
  };
  return 4n * (4n * atanInv(5n) - atanInv(239n));
}

/** mpmath's dps -> prec, prec -> dps and repr digits. */
function dpsToPrec(dps: number): number {
  return Math.max(1, pyRoundHalfEven((Math.trunc(dps) + 1) * 3.3219280948873626));
}
function reprDps(prec: number): number {
  const dps = Math.max(1, pyRoundHalfEven(prec / 3.3219280948873626) - 1);
  return dps === 15 ? 17 : dps + 3;
}
function pyRoundHalfEven(x: number): number {
  const f = Math.floor(x);
  const d = x - f;
  if (d > 0.5) return f + 1;
  if (d < 0.5) return f;
  return f % 2 === 0 ? f : f + 1;
}

/** mpmath's to_str: `dps` digits (truncated to dps + 3, then rounded half up), fixed notation near unit size. */
function mpfToStr(v: Mpf, dps: number): string {
  if (v.special) return v.special;
  if (v.man === 0n) return "0.0";
  const neg = v.man < 0n;
  const man = neg ? -v.man : v.man;
  // Decimal digits of man * 2^exp, truncated to dps + 3 significant digits.
  let num = man;
  let den = 1n;
  if (v.exp >= 0) num <<= BigInt(v.exp);
  else den <<= BigInt(-v.exp);
  let exponent = num.toString().length - den.toString().length;
  const scaled = (e: number) => e >= 0 ? num / (den * 10n ** BigInt(e)) : (num * 10n ** BigInt(-e)) / den;
  if (scaled(exponent) === 0n) exponent -= 1;
  else if (scaled(exponent) >= 10n) exponent += 1;
  let digits = scaled(exponent - (dps + 2)).toString();
  const minFixed = Math.min(-Math.trunc(dps / 3), -5);
  if (digits.length > dps && "56789".includes(digits[dps])) {
    digits = digits.slice(0, dps);
    let i = dps - 1;
    while (i >= 0 && digits[i] === "9") i--;
    if (i >= 0) digits = digits.slice(0, i) + String(Number(digits[i]) + 1) + "0".repeat(dps - i - 1);
    else {
      digits = "1" + "0".repeat(dps - 1);
      exponent += 1;
    }
  } else digits = digits.slice(0, dps);
  let split = 1;
  if (minFixed < exponent && exponent < dps) {
    if (exponent < 0) digits = "0".repeat(-exponent) + digits;
    else {
      split = exponent + 1;
      if (split > dps) digits += "0".repeat(split - dps);
    }
    exponent = 0;
  }
  let text = `${digits.slice(0, split)}.${digits.slice(split)}`.replace(/0+$/, "");
  if (text.endsWith(".")) text += "0";
  const sign = neg ? "-" : "";
  if (exponent === 0) return sign + text;
  return exponent > 0 ? `${sign}${text}e+${exponent}` : `${sign}${text}e${exponent}`;
}

/** mpmath's ZeroDivisionError carries no message (BFCL's logarithm returns `{"error": ""}`). */
export class ZeroDivisionError extends Error {
  constructor() {
    super("");
  }
}

const NAN: Mpf = { man: 0n, exp: 0, special: "nan" };
const inf = (negative: boolean): Mpf => ({ man: 0n, exp: 0, special: negative ? "-inf" : "+inf" });
const isZero = (a: Mpf): boolean => !a.special && a.man === 0n;
/** The sign of a nonzero value, infinities included. */
const negative = (a: Mpf): boolean => a.special ? a.special === "-inf" : a.man < 0n;
const neg = (a: Mpf): Mpf => a.special ? (a.special === "nan" ? a : inf(!negative(a))) : { man: -a.man, exp: a.exp };

/** `mpf_mul(a, b)` with no precision: exact (inf * 0 is nan). */
function mulExact(a: Mpf, b: Mpf): Mpf {
  if (a.special === "nan" || b.special === "nan") return NAN;
  if (a.special || b.special) return isZero(a) || isZero(b) ? NAN : inf(negative(a) !== negative(b));
  return { man: a.man * b.man, exp: a.exp + b.exp };
}

/** `mpf_add(a, b, prec)` under mpmath's default rounding for it, round_down (toward zero). */
function addDown(a: Mpf, b: Mpf, prec: number): Mpf {
  if (a.special === "nan" || b.special === "nan") return NAN;
  if (a.special && b.special) return negative(a) === negative(b) ? a : NAN;
  if (a.special || b.special) return a.special ? a : b;
  const e = Math.min(a.exp, b.exp);
  const man = (a.man << BigInt(a.exp - e)) + (b.man << BigInt(b.exp - e));
  if (man === 0n) return { man: 0n, exp: 0 };
  const extra = bitLength(man) - prec;
  if (extra <= 0) return { man, exp: e };
  const mag = (man < 0n ? -man : man) >> BigInt(extra);
  return { man: man < 0n ? -mag : mag, exp: e + extra };
}

/** `mpf_div(a, b, prec)` rounded to nearest, half to even; a zero divisor raises ZeroDivisionError. */
function divide(a: Mpf, b: Mpf, prec: number): Mpf {
  if (isZero(b)) throw new ZeroDivisionError();
  if (a.special === "nan" || b.special === "nan" || (a.special && b.special)) return NAN;
  if (a.special) return inf(negative(a) !== negative(b));
  if (b.special || a.man === 0n) return { man: 0n, exp: 0 };
  const r = roundRational(a.man, b.man, prec);
  return { man: r.man, exp: r.exp + a.exp - b.exp };
}

/**
 * mpmath's `mpc_div` at `prec`: (a + bi) / (c + di) = ((ac + bd) + (bc - ad)i) / (c^2 + d^2), the sums rounded
 * toward zero at prec + 10 bits, the two quotients to nearest at prec.
 */
function complexDivide(z: [Mpf, Mpf], w: [Mpf, Mpf], prec: number): [Mpf, Mpf] {
  const [a, b] = z, [c, d] = w;
  const wp = prec + 10;
  const mag = addDown(mulExact(c, c), mulExact(d, d), wp);
  const t = addDown(mulExact(a, c), mulExact(b, d), wp);
  const u = addDown(mulExact(b, c), neg(mulExact(a, d)), wp);
  return [divide(t, mag, prec), divide(u, mag, prec)];
}

/** mpmath's `mpc_mpf_div` at `prec`, a real p over c + di: (cp - dpi) / (c^2 + d^2), the sum rounded as above. */
function realOverComplex(p: Mpf, w: [Mpf, Mpf], prec: number): [Mpf, Mpf] {
  const [c, d] = w;
  const mag = addDown(mulExact(c, c), mulExact(d, d), prec + 10);
  return [divide(mulExact(c, p), mag, prec), divide(neg(mulExact(d, p)), mag, prec)];
}

/** ln|x| rounded to prec bits (-inf for 0, +inf for an infinity): the real part of x's log. */
function lnMpf(x: Mpf, prec: number): Mpf {
  if (x.special) return x.special === "nan" ? NAN : inf(false);
  if (x.man === 0n) return inf(true);
  const w = prec + 80;
  const man = x.man < 0n ? -x.man : x.man;
  const [num, k] = x.exp >= 0 ? [man << BigInt(x.exp), 0] : [man, -x.exp];
  return roundRational(lnFixed(num, k, BigInt(w)), 1n << BigInt(w), prec);
}

/** `mpmath.log(x)` at prec as (real, imaginary) parts: a negative x (or -inf) has imaginary part pi. */
function logParts(x: Mpf, prec: number): [Mpf, Mpf | undefined] {
  if (x.special === "nan" || isZero(x) || !negative(x)) return [lnMpf(x, prec), undefined];
  const w = prec + 80;
  return [lnMpf(x, prec), roundRational(piFixed(BigInt(w)), 1n << BigInt(w), prec)];
}

/** Whether mpmath reads `text` as a number (see mpfOf). */
export function isMpfText(text: string): boolean {
  try {
    mpfOf(text, 53);
    return true;
  } catch (e) {
    if (e instanceof SyntaxError) return false;
    throw e;
  }
}

/**
 * An argument as `mpmath.log` converts it: an int or float exactly (a number here), a string by mpmath's `from_str`
 * at the working precision, rounded to nearest (`'0.1'` is not the double 0.1): decimal literals as Python's float()
 * reads them, `p/q` rationals, `inf`, `-inf`, `nan`. Throws SyntaxError for text mpmath does not read.
 */
function mpfOf(x: number | string, prec: number): Mpf {
  if (typeof x === "number") {
    if (Number.isNaN(x)) return NAN;
    if (!Number.isFinite(x)) return inf(x < 0);
    const [num, k] = exactBinary(Math.abs(x));
    return { man: x < 0 ? -num : num, exp: -k };
  }
  const t = x.toLowerCase().trim();
  if (t === "inf" || t === "+inf" || t === "-inf") return inf(t === "-inf");
  if (t === "nan") return NAN;
  const rational = /^([+-]?\d+)l?\/([+-]?\d+)l?$/.exec(t);
  if (rational) {
    if (BigInt(rational[2]) === 0n) throw new ZeroDivisionError();
    return roundRational(BigInt(rational[1]), BigInt(rational[2]), prec);
  }
  const literal = /^([+-]?)(\d*)(?:\.(\d*))?(?:e([+-]?\d+))?l?$/.exec(t);
  if (!literal || (literal[2] === "" && (literal[3] ?? "") === "")) throw new SyntaxError(`not a number: ${x}`);
  const frac = (literal[3] ?? "").replace(/0+$/, "");
  const exp = Number(literal[4] ?? 0) - frac.length;
  if (Math.abs(exp) > 400) throw new RangeError(`the decimal ${x} is outside what this reproduces of mpmath`);
  const man = BigInt(`${literal[1]}${literal[2] || "0"}${frac}`);
  return exp >= 0 ? roundRational(man * 10n ** BigInt(exp), 1n, prec) : roundRational(man, 10n ** BigInt(-exp), prec);
}

/**
 * The repr of `mpmath.log(value) / mpmath.log(base)` at `mpmath.mp.dps = dps` (a string argument converted as
 * mpmath converts text, at that precision): `mpf('2.0')`, or where either log is
 * complex (a negative value or base) `mpc(real='...', imag='...')`. A real divisor divides each part on its own
 * (`mpc_div_mpf`), a complex one goes through `mpc_div`, or `mpc_mpf_div` under a real dividend. Throws `ZeroDivisionError` when log(base) is 0.
 */
export function mpmathLogRatio(value: number | string, base: number | string, dps: number): string {
  if (dps > MAX_DIGITS) throw new RangeError(`precision ${dps} is beyond the ${MAX_DIGITS} digits reproduced here`);
  const prec = dpsToPrec(dps);
  const digits = reprDps(prec);
  const [la, laIm] = logParts(mpfOf(value, prec), prec);
  const [lb, lbIm] = logParts(mpfOf(base, prec), prec);
  let parts: [Mpf, Mpf] | undefined;
  if (lbIm) parts = laIm ? complexDivide([la, laIm], [lb, lbIm], prec) : realOverComplex(la, [lb, lbIm], prec);
  else if (laIm) parts = [divide(la, lb, prec), divide(laIm, lb, prec)];
  if (!parts) return `mpf('${mpfToStr(divide(la, lb, prec), digits)}')`;
  return `mpc(real='${mpfToStr(parts[0], digits)}', imag='${mpfToStr(parts[1], digits)}')`;
}

/** Python's Decimal from an int or float: the exact value as coefficient * 10^exponent. */
function decimalOf(x: number): [bigint, number] {
  const [num, k] = exactBinary(Math.abs(x));
  // num / 2^k = num * 5^k / 10^k; as_integer_ratio is in lowest terms, so strip common factors of 2 first.
  let n = num;
  let e = k;
  while (e > 0 && (n & 1n) === 0n) {
    n >>= 1n;
    e--;
  }
  return [n * 5n ** BigInt(e), -e];
}

/** Decimal's __str__ for a non-negative coefficient and exponent. */
function decimalStr(coeff: bigint, exp: number): string {
  const digits = coeff.toString();
  const leftdigits = exp + digits.length;
  let dotplace: number;
  if (exp <= 0 && leftdigits > -6) dotplace = leftdigits;
  else dotplace = 1;
  let intpart: string;
  let fracpart: string;
  if (dotplace <= 0) {
    intpart = "0";
    fracpart = "." + "0".repeat(-dotplace) + digits;
  } else if (dotplace >= digits.length) {
    intpart = digits + "0".repeat(dotplace - digits.length);
    fracpart = "";
  } else {
    intpart = digits.slice(0, dotplace);
    fracpart = "." + digits.slice(dotplace);
  }
  const e = leftdigits - dotplace;
  const expText = e === 0 ? "" : `E${e > 0 ? "+" : ""}${e}`;
  return intpart + fracpart + expText;
}

/** Rounds coefficient * 10^exp to at most `prec` digits, half to even (Decimal's _fix). */
function fixDecimal(coeff: bigint, exp: number, prec: number): [bigint, number] {
  const len = coeff.toString().length;
  if (len <= prec) return [coeff, exp];
  const drop = len - prec;
  const p = 10n ** BigInt(drop);
  let q = coeff / p;
  const r = coeff % p;
  const half = p / 2n;
  if (r > half || (r === half && (q & 1n) === 1n)) q += 1n;
  let e = exp + drop;
  if (q.toString().length > prec) {
    q /= 10n;
    e += 1;
  }
  return [q, e];
}

/** The repr of `Decimal(x).sqrt()` at `getcontext().prec = prec`, for x >= 0: `Decimal('1.414213562')`. */
export function decimalSqrt(x: number, prec: number): string {
  if (prec > MAX_DIGITS) throw new RangeError(`precision ${prec} is beyond the ${MAX_DIGITS} digits reproduced here`);
  const [c0, e0] = decimalOf(x);
  if (c0 === 0n) return `Decimal('${decimalStr(0n, Math.floor(e0 / 2))}')`;
  const digitsLen = c0.toString().length;
  const p = prec + 1;
  let e = e0 >> 1;
  let c: bigint;
  let l: number;
  if (e0 & 1) {
    c = c0 * 10n;
    l = (digitsLen >> 1) + 1;
  } else {
    c = c0;
    l = (digitsLen + 1) >> 1;
  }
  const shift = p - l;
  let exact: boolean;
  if (shift >= 0) {
    c *= 100n ** BigInt(shift);
    exact = true;
  } else {
    const d = 100n ** BigInt(-shift);
    exact = c % d === 0n;
    c /= d;
  }
  e -= shift;
  let n = 10n ** BigInt(p);
  for (;;) {
    const q = c / n;
    if (n <= q) break;
    n = (n + q) >> 1n;
  }
  exact = exact && n * n === c;
  if (exact) {
    if (shift >= 0) n /= 10n ** BigInt(shift);
    else n *= 10n ** BigInt(-shift);
    e += shift;
  } else if (n % 5n === 0n) n += 1n;
  const [fc, fe] = fixDecimal(n, e, prec);
  return `Decimal('${decimalStr(fc, fe)}')`;
}
