/**
 * BFCL's MathAPI (stateless): arithmetic, statistics, unit conversions, rounding, and two high-precision methods
 * (logarithm through mpmath, square_root through Decimal) whose results print as `mpf('...')` / `Decimal('...')`
 * (see py_numeric.ts). Python's number types are kept: int op int stays int (bigint past 2^53), anything with a float
 * is a float (5.0 prints as 5.0), `/` is always float; `add` joins two strings or two lists as Python's `+` does.
 * Sums run left to right (CPython 3.11's `sum`; 3.12's compensated float sum can differ in the last bit).
 */
import { ApiCallError, type MethodSpec, PyApiBase } from "./base.ts";
import {
  arith,
  compareStr,
  complexRepr,
  hashKey,
  intResult,
  isDict,
  isNumber,
  isPyFloat,
  num,
  pyEq,
  pyFloat,
  pyInt,
  PyOpaque,
  pyRepr,
  pyRound,
  pyStr,
  truthy,
} from "./py.ts";
import { decimalSqrt, isMpfText, mpmathLogRatio, ZeroDivisionError } from "./py_numeric.ts";

/** Python's `sum(numbers)` (start 0, left to right), or undefined on a non-number. */
function pySum(xs: unknown[]): unknown {
  let acc: unknown = 0;
  for (const x of xs) {
    acc = arith(acc, x, "+");
    if (acc === undefined) return undefined;
  }
  return acc;
}

const TO_METERS: Record<string, number> = { km: 1000, m: 1, cm: 0.01, mm: 0.001, um: 1e-6, nm: 1e-9 };

const IMPERIAL: Record<string, number> = {
  cm_to_in: 0.393701,
  in_to_cm: 2.54,
  m_to_ft: 3.28084,
  ft_to_m: 0.3048,
  m_to_yd: 1.09361,
  yd_to_m: 0.9144,
  km_to_miles: 0.621371,
  miles_to_km: 1.60934,
  kg_to_lb: 2.20462,
  lb_to_kg: 0.453592,
  celsius_to_fahrenheit: 1.8,
  fahrenheit_to_celsius: 5 / 9,
};

/** Python's iteration of a "list" argument: a list, a string's characters, a dict's keys; undefined otherwise. */
function seqOf(v: unknown): unknown[] | undefined {
  if (Array.isArray(v)) return v;
  if (typeof v === "string") return [...v];
  if (v instanceof Map) return [...v.keys()];
  if (isDict(v)) return Object.keys(v);
  return undefined;
}

/**
 * mpmath's conversion of an argument: numbers and bools as numbers, a string as its text (py_numeric.ts converts it as
 * mpmath does, at the working precision), anything else its ValueError.
 */
function mpfArg(v: unknown): number | string {
  if (typeof v === "boolean") return Number(v);
  const x = num(v);
  if (x !== undefined) return Number(x);
  if (typeof v === "string") return v;
  throw new ApiCallError(`cannot create mpf from ${pyRepr(v)}`, "ValueError");
}

/**
 * Python's min/max over a list (or a string's characters): numbers compare as numbers, strings by code point, a
 * mix is Python's TypeError (undefined here; BFCL turns it into its error dict).
 */
function extreme(seq: unknown, sign: 1 | -1): unknown {
  const xs = seqOf(seq);
  if (xs === undefined) return undefined;
  let best = xs[0];
  for (const x of xs.slice(1)) {
    let d: number;
    if (isNumber(x) && isNumber(best)) d = Number(num(x)) - Number(num(best));
    else if (typeof x === "string" && typeof best === "string") d = compareStr(x, best);
    else return undefined;
    if (d * sign < 0) best = x;
  }
  return best;
}

/** The math class; stateless, so loadScenario keeps nothing. */
export class MathAPI extends PyApiBase {
  readonly name = "MathAPI";

  loadScenario(_config: Record<string, unknown>, _longContext = false): void {}

  state(): Record<string, unknown> {
    return {};
  }

  protected readonly table: Record<string, MethodSpec> = {
    logarithm: {
      params: ["value", "base", "precision"],
      run: ({ value, base, precision }) => {
        // BFCL wraps the whole computation in `except Exception as e: return {"error": str(e)}`.
        try {
          const dps = pyInt(precision);
          const [a, b] = [mpfArg(value), mpfArg(base)];
          let result: string;
          try {
            result = mpmathLogRatio(a, b, dps);
          } catch (e) {
            if (!(e instanceof SyntaxError)) throw e;
            const bad = typeof a === "string" && !isMpfText(a) ? a : b;
            throw new ApiCallError(`cannot create mpf from ${pyRepr(bad)}`, "ValueError");
          }
          return { result: new PyOpaque(result) };
        } catch (e) {
          if (e instanceof ZeroDivisionError) return { error: "" };
          if (e instanceof ApiCallError) return { error: e.message };
          throw e;
        }
      },
    },
    mean: {
      params: ["numbers"],
      run: ({ numbers }) => {
        if (!truthy(numbers)) return { error: "Cannot calculate mean of an empty list" };
        const xs = seqOf(numbers);
        const s = xs && pySum(xs);
        if (!xs || s === undefined) return { error: "All elements in the list must be numbers" };
        return { result: pyFloat(Number(num(s)) / xs.length) };
      },
    },
    standard_deviation: {
      params: ["numbers"],
      run: ({ numbers }) => {
        if (!truthy(numbers)) return { error: "Cannot calculate standard deviation of an empty list" };
        const xs = seqOf(numbers);
        const s = xs && pySum(xs);
        if (!xs || s === undefined) return { error: "All elements in the list must be numbers" };
        const mean = Number(num(s)) / xs.length;
        let v = 0;
        for (const x of xs) v += (Number(num(x)) - mean) ** 2;
        return { result: pyFloat(Math.sqrt(v / xs.length)) };
      },
    },
    si_unit_conversion: {
      params: ["value", "unit_in", "unit_out"],
      run: ({ value, unit_in, unit_out }) => {
        if (!isNumber(value)) return { error: "Value must be a number" };
        const inn = hashKey(unit_in);
        const out = hashKey(unit_out);
        if (
          typeof inn !== "string" || !Object.hasOwn(TO_METERS, inn) || typeof out !== "string" ||
          !Object.hasOwn(TO_METERS, out)
        ) {
          return { error: `Conversion from '${pyStr(unit_in)}' to '${pyStr(unit_out)}' is not supported` };
        }
        const meters = arith(value, TO_METERS[inn], "*");
        return { result: pyFloat(Number(num(meters)) * (1 / TO_METERS[out])) };
      },
    },
    imperial_si_conversion: {
      params: ["value", "unit_in", "unit_out"],
      run: ({ value, unit_in, unit_out }) => {
        if (!isNumber(value)) return { error: "Value must be a number" };
        if (pyEq(unit_in, unit_out)) return { result: value };
        const key = `${pyStr(unit_in)}_to_${pyStr(unit_out)}`;
        if (!Object.hasOwn(IMPERIAL, key)) {
          return { error: `Conversion from '${pyStr(unit_in)}' to '${pyStr(unit_out)}' is not supported` };
        }
        const x = Number(num(value));
        if (unit_in === "celsius" && unit_out === "fahrenheit") return { result: pyFloat(x * IMPERIAL[key] + 32) };
        if (unit_in === "fahrenheit" && unit_out === "celsius") return { result: pyFloat((x - 32) * IMPERIAL[key]) };
        return { result: pyFloat(x * IMPERIAL[key]) };
      },
    },
    add: {
      params: ["a", "b"],
      run: ({ a, b }) => {
        if (typeof a === "string" && typeof b === "string") return { result: a + b };
        if (Array.isArray(a) && Array.isArray(b)) return { result: [...a, ...b] };
        const r = arith(a, b, "+");
        return r === undefined ? { error: "Both inputs must be numbers" } : { result: r };
      },
    },
    subtract: {
      params: ["a", "b"],
      run: ({ a, b }) => {
        const r = arith(a, b, "-");
        return r === undefined ? { error: "Both inputs must be numbers" } : { result: r };
      },
    },
    multiply: {
      params: ["a", "b"],
      run: ({ a, b }) => {
        const r = arith(a, b, "*");
        return r === undefined ? { error: "Both inputs must be numbers" } : { result: r };
      },
    },
    divide: {
      params: ["a", "b"],
      run: ({ a, b }) => {
        if (isNumber(b) && Number(num(b)) === 0) return { error: "Cannot divide by zero" };
        if (!isNumber(a) || !isNumber(b)) return { error: "Both inputs must be numbers" };
        return { result: pyFloat(Number(num(a)) / Number(num(b))) };
      },
    },
    power: {
      params: ["base", "exponent"],
      run: ({ base, exponent }) => {
        const x = num(base);
        const y = num(exponent);
        if (x === undefined || y === undefined) return { error: "Both inputs must be numbers" };
        if (!isPyFloat(base) && !isPyFloat(exponent) && y >= 0) {
          // Python computes any size, then refuses to print past 4300 digits; the estimate spares the work.
          if (Number(y) * Math.log10(Math.max(Math.abs(Number(x)), 1)) > 4301) {
            throw new ApiCallError(
              "Exceeds the limit (4300 digits) for integer string conversion; use sys.set_int_max_str_digits() to increase the limit",
              "ValueError",
            );
          }
          return { result: intResult(BigInt(x) ** BigInt(y)) };
        }
        const b = Number(x);
        const e = Number(y);
        if (b < 0 && !Number.isInteger(e)) {
          // CPython hands a negative base with a fractional exponent to complex pow (c_pow with a real exponent).
          const len = Math.abs(b) ** e;
          const phase = Math.atan2(0, b) * e;
          return { result: new PyOpaque(complexRepr(len * Math.cos(phase), len * Math.sin(phase))) };
        }
        if (b === 0 && e < 0) throw new ApiCallError("0.0 cannot be raised to a negative power", "ZeroDivisionError");
        const r = b ** e;
        if (!Number.isFinite(r) && Number.isFinite(b) && Number.isFinite(e)) {
          throw new ApiCallError("(34, 'Numerical result out of range')", "OverflowError");
        }
        return { result: pyFloat(r) };
      },
    },
    square_root: {
      params: ["number", "precision"],
      run: ({ number, precision }) => {
        const x = num(number);
        if (x === undefined) {
          return { error: "Input must be a number or computation resulted in an invalid operation" };
        }
        if (Number(x) < 0) return { error: "Cannot calculate square root of a negative number" };
        if (typeof precision === "boolean") precision = Number(precision);
        if (typeof precision !== "number" || !Number.isInteger(precision)) {
          return { error: "Input must be a number or computation resulted in an invalid operation" };
        }
        if (precision < 1) throw new ApiCallError("valid range for prec is [1, MAX_PREC]", "ValueError");
        return { result: new PyOpaque(decimalSqrt(Number(x), precision)) };
      },
    },
    absolute_value: {
      params: ["number"],
      run: ({ number }) => {
        const x = num(number);
        if (x === undefined) return { error: "Input must be a number" };
        if (typeof x === "bigint") return { result: intResult(x < 0n ? -x : x) };
        return { result: isPyFloat(number) ? pyFloat(Math.abs(x)) : Math.abs(x) };
      },
    },
    round_number: {
      params: ["number", ["decimal_places", 0]],
      run: ({ number, decimal_places }) => {
        const x = num(number);
        const d = typeof decimal_places === "boolean" ? Number(decimal_places) : decimal_places;
        if (x === undefined || typeof d !== "number" || !Number.isInteger(d)) {
          return { error: "First input must be a number, second input must be an integer" };
        }
        if (!isPyFloat(number)) {
          // round(int, d): unchanged for d >= 0, else to a multiple of 10^-d, ties to even.
          if (d >= 0) return { result: typeof x === "bigint" ? x : Math.trunc(Number(x)) };
          const p = 10n ** BigInt(-d);
          const v = BigInt(x);
          let q = v / p;
          let r = v % p;
          if (r < 0n) {
            q -= 1n;
            r += p;
          }
          if (r * 2n > p || (r * 2n === p && (q & 1n) === 1n)) q += 1n;
          return { result: intResult(q * p) };
        }
        if (d >= 0) return { result: pyFloat(pyRound(Number(x), d)) };
        const p = 10 ** -d;
        return { result: pyFloat(pyRound(Number(x) / p, 0) * p) };
      },
    },
    percentage: {
      params: ["part", "whole"],
      run: ({ part, whole }) => {
        if (isNumber(whole) && Number(num(whole)) === 0) return { error: "Whole value cannot be zero" };
        if (!isNumber(part) || !isNumber(whole)) return { error: "Both inputs must be numbers" };
        return { result: pyFloat((Number(num(part)) / Number(num(whole))) * 100) };
      },
    },
    min_value: {
      params: ["numbers"],
      run: ({ numbers }) => {
        if (!truthy(numbers)) return { error: "Cannot find minimum of an empty list" };
        const r = extreme(numbers, 1);
        return r === undefined ? { error: "All elements in the list must be numbers" } : { result: r };
      },
    },
    max_value: {
      params: ["numbers"],
      run: ({ numbers }) => {
        if (!truthy(numbers)) return { error: "Cannot find maximum of an empty list" };
        const r = extreme(numbers, -1);
        return r === undefined ? { error: "All elements in the list must be numbers" } : { result: r };
      },
    },
    sum_values: {
      params: ["numbers"],
      run: ({ numbers }) => {
        if (!truthy(numbers)) return { error: "Cannot calculate sum of an empty list" };
        const xs = seqOf(numbers);
        const s = xs && pySum(xs);
        return !xs || s === undefined ? { error: "All elements in the list must be numbers" } : { result: s };
      },
    },
  };
}
