/**
 * MathAPI against a transcript of every method, errors included, with the exact texts gorilla's Python class gives:
 * Python's int/float types (5 vs 5.0), mpmath's low-precision logarithm repr, Decimal's square root repr, complex
 * powers, and the TypeError texts of a bad call.
 */
import { newInstance } from "../../../tasks/bfcl/classes/api.ts";
import { PyFloat } from "../../../tasks/bfcl/classes/py.ts";
import { playTranscript, type Step } from "./transcript.ts";

const F = (x: number) => new PyFloat(x);

Deno.test("MathAPI: every method and its error texts as BFCL's Python gives them", () => {
  const math = newInstance("MathAPI");
  math.loadScenario({});
  const steps: Step[] = [
    ["add", { "a": 2, "b": 3 }, '{"result": 5}'],
    ["add", { "a": F(2), "b": 3 }, '{"result": 5.0}'],
    ["add", { "a": "a", "b": 1 }, '{"error": "Both inputs must be numbers"}'],
    ["subtract", { "a": 10, "b": 2.5 }, '{"result": 7.5}'],
    ["multiply", { "a": 4, "b": 2.5 }, '{"result": 10.0}'],
    ["multiply", { "a": "x", "b": 2 }, '{"error": "Both inputs must be numbers"}'],
    ["divide", { "a": 6, "b": 3 }, '{"result": 2.0}'],
    ["divide", { "a": 1, "b": 0 }, '{"error": "Cannot divide by zero"}'],
    ["power", { "base": 2, "exponent": 10 }, '{"result": 1024}'],
    ["power", { "base": 2, "exponent": -2 }, '{"result": 0.25}'],
    ["power", { "base": -8, "exponent": 0.5 }, "{'result': (1.7319121124709868e-16+2.8284271247461903j)}"],
    ["square_root", { "number": 2, "precision": 10 }, "{'result': Decimal('1.414213562')}"],
    ["square_root", { "number": F(16), "precision": 3 }, "{'result': Decimal('4')}"],
    ["square_root", { "number": -4, "precision": 3 }, '{"error": "Cannot calculate square root of a negative number"}'],
    ["square_root", { "number": 2, "precision": 0 }, "Error during execution: valid range for prec is [1, MAX_PREC]"],
    ["logarithm", { "value": F(36), "base": F(6), "precision": 4 }, "{'result': mpf('2.0')}"],
    ["logarithm", { "value": 8, "base": 2, "precision": 10 }, "{'result': mpf('3.000000000029')}"],
    ["logarithm", { "value": F(980), "base": 20, "precision": 10 }, "{'result': mpf('2.299121531134')}"],
    ["logarithm", { "value": 1, "base": 1, "precision": 5 }, '{"error": ""}'],
    ["logarithm", { "value": -1, "base": 10, "precision": 5 }, "{'result': mpc(real='0.0', imag='1.3643761')}"],
    // A negative base: a complex divisor (mpmath's mpc_div; mpc_mpf_div under a real dividend), as CPython printed.
    ["logarithm", { "value": F(-36), "base": F(-6), "precision": -4 }, "{'result': mpc(real='1.0', imag='-0.5')}"],
    [
      "logarithm",
      { "value": 8, "base": -2, "precision": 10 },
      "{'result': mpc(real='0.1392609706363', imag='-0.6311808726314')}",
    ],
    ["logarithm", { "value": 0, "base": -2, "precision": 5 }, "{'result': mpc(real='-inf', imag='+inf')}"],
    [
      "logarithm",
      { "value": 2.5, "base": -0.5, "precision": 20 },
      "{'result': mpc(real='-0.061364329868436336465172', imag='-0.27812524282563681918972')}",
    ],
    [
      "logarithm",
      { "value": -7, "base": -1e-300, "precision": 30 },
      "{'result': mpc(real='-0.00279625204313693103272768224416385', imag='-0.00456063831336293104255122318642922')}",
    ],
    ["logarithm", { "value": 2, "base": "-inf", "precision": 5 }, "{'result': mpc(real='nan', imag='0.0')}"],
    // Text is converted as mpmath converts it, at the working precision: '0.1' is not the double 0.1.
    [
      "logarithm",
      { "value": "0.1", "base": 10, "precision": 30 },
      "{'result': mpf('-1.0000000000000000000000000000002')}",
    ],
    [
      "logarithm",
      { "value": "1/3", "base": 10, "precision": 30 },
      "{'result': mpf('-0.477121254719662437295027903255188')}",
    ],
    ["logarithm", { "value": "5/0", "base": 10, "precision": 30 }, '{"error": ""}'],
    [
      "logarithm",
      { "value": "infinity", "base": 10, "precision": 30 },
      `{"error": "cannot create mpf from 'infinity'"}`,
    ],
    ["mean", { "numbers": [1, 2, 3, 4] }, '{"result": 2.5}'],
    ["mean", { "numbers": [] }, '{"error": "Cannot calculate mean of an empty list"}'],
    ["mean", { "numbers": [1, "a"] }, '{"error": "All elements in the list must be numbers"}'],
    ["standard_deviation", { "numbers": [2, 4, 4, 4, 5, 5, 7, 9] }, '{"result": 2.0}'],
    ["standard_deviation", { "numbers": [] }, '{"error": "Cannot calculate standard deviation of an empty list"}'],
    ["si_unit_conversion", { "value": 5, "unit_in": "km", "unit_out": "m" }, '{"result": 5000.0}'],
    [
      "si_unit_conversion",
      { "value": 5, "unit_in": "kg", "unit_out": "m" },
      "{\"error\": \"Conversion from 'kg' to 'm' is not supported\"}",
    ],
    ["si_unit_conversion", { "value": "5", "unit_in": "km", "unit_out": "m" }, '{"error": "Value must be a number"}'],
    ["imperial_si_conversion", { "value": 100, "unit_in": "celsius", "unit_out": "fahrenheit" }, '{"result": 212.0}'],
    ["imperial_si_conversion", { "value": 3, "unit_in": "m", "unit_out": "m" }, '{"result": 3}'],
    [
      "imperial_si_conversion",
      { "value": 3, "unit_in": "m", "unit_out": "ly" },
      "{\"error\": \"Conversion from 'm' to 'ly' is not supported\"}",
    ],
    ["absolute_value", { "number": -3.5 }, '{"result": 3.5}'],
    ["absolute_value", { "number": "x" }, '{"error": "Input must be a number"}'],
    ["round_number", { "number": 2.675, "decimal_places": 2 }, '{"result": 2.67}'],
    ["round_number", { "number": 2.5 }, '{"result": 2.0}'],
    ["round_number", { "number": 1234, "decimal_places": -2 }, '{"result": 1200}'],
    [
      "round_number",
      { "number": 1.5, "decimal_places": 1.5 },
      '{"error": "First input must be a number, second input must be an integer"}',
    ],
    ["percentage", { "part": 1, "whole": 3 }, '{"result": 33.33333333333333}'],
    ["percentage", { "part": 1, "whole": 0 }, '{"error": "Whole value cannot be zero"}'],
    ["min_value", { "numbers": [3, F(1), 2] }, '{"result": 1.0}'],
    ["max_value", { "numbers": [] }, '{"error": "Cannot find maximum of an empty list"}'],
    ["sum_values", { "numbers": [0.1, 0.2, 0.3] }, '{"result": 0.6000000000000001}'],
    ["sum_values", { "numbers": [1, 2] }, '{"result": 3}'],
    ["add", { "a": 1 }, "Error during execution: MathAPI.add() missing 1 required positional argument: 'b'"],
    [
      "divide",
      { "a": 1, "b": 2, "c": 3 },
      "Error during execution: MathAPI.divide() got an unexpected keyword argument 'c'",
    ],
  ];
  playTranscript(math, steps);
});
