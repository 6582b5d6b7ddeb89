/**
 * Python's `random` reproduced (first draws for several seeds against CPython 3.11's own numbers, each with the
 * Python line that made them) and Python's text forms: `json.dumps`, `str()`, float repr, `.2f` / `round` ties,
 * CPython's argument-binding errors, and JSON read with float types kept.
 */
import assert from "node:assert/strict";
import { bindArgs } from "../../../tasks/bfcl/classes/base.ts";
import {
  floatRepr,
  formatFixed,
  parsePyJson,
  PyEllipsis,
  PyFloat,
  pyFloat,
  pyRepr,
  pyRound,
  renderResult,
} from "../../../tasks/bfcl/classes/py.ts";
import { PyRandom } from "../../../src/util/py_random.ts";

// python3 -c 'import random
// for s in [1, 42, 200191, 1053520, 141053]:
//   r=random.Random(s); a=[r.randint(1,100) for _ in range(5)]; b=repr(r.random()); c=r.choice(["a","b","c","d","e"])
//   d=r.randint(100000000000, 999999999999); u=repr(r.uniform(-10.0,40.0)); print(s, a, b, c, d, u)'
const CPYTHON: [number, number[], string, string, number, string][] = [
  [1, [18, 73, 98, 9, 33], "0.11791870367106105", "d", 814992848993, "8.98076116618639"],
  [42, [82, 15, 4, 95, 36], "0.24489185380347622", "b", 214832269481, "23.834974371145563"],
  [200191, [57, 32, 15, 15, 50], "0.9878793573409691", "b", 594112326063, "10.598577089606756"],
  [1053520, [68, 7, 64, 95, 82], "0.20365277490405342", "c", 221608723022, "31.337565191316152"],
  [141053, [19, 34, 48, 25, 44], "0.6422889192491581", "c", 953188273333, "9.61058120438231"],
];

Deno.test("PyRandom draws what CPython's random.Random(seed) draws", () => {
  for (const [seed, ints, rand, choice, big, uniform] of CPYTHON) {
    const r = new PyRandom(seed);
    assert.deepEqual([0, 0, 0, 0, 0].map(() => r.randint(1, 100)), ints, `seed ${seed} randint`);
    assert.equal(floatRepr(r.random()), rand, `seed ${seed} random`);
    assert.equal(r.choice(["a", "b", "c", "d", "e"]), choice, `seed ${seed} choice`);
    assert.equal(r.randint(100000000000, 999999999999), big, `seed ${seed} 12-digit randint`);
    assert.equal(floatRepr(r.uniform(-10, 40)), uniform, `seed ${seed} uniform`);
  }
});

// python3 -c 'import random; r=random.Random(2**40+7); print(r.getrandbits(70), r.sample(range(100),5), r.sample(range(10),3))'
Deno.test("PyRandom: multi-word seeds, getrandbits over 64 bits, sample", () => {
  const r = new PyRandom(2n ** 40n + 7n);
  assert.equal(r.getrandbitsBig(70), 973016391035727360218n);
  const range = (n: number) => [...Array(n).keys()];
  assert.deepEqual(r.sample(range(100), 5), [81, 73, 90, 60, 32]);
  assert.deepEqual(r.sample(range(10), 3), [9, 2, 6]);
});

// python3 -c 'import json; print(json.dumps({"result": 5.0, "n": 3, "s": "é\"x\n", "l": [True, None, 1e16, 1e-05, 0.1]}))'
// python3 -c 'print(str({"a": [1, 2.0, "it'"'"'s", None, False]}))'
Deno.test("renderResult writes dicts as json.dumps and other values as str()", () => {
  const dict = { result: pyFloat(5), n: 3, s: 'é"x\n', l: [true, null, pyFloat(1e16), 1e-5, 0.1] };
  assert.equal(
    renderResult(dict),
    '{"result": 5.0, "n": 3, "s": "\\u00e9\\"x\\n", "l": [true, null, 1e+16, 1e-05, 0.1]}',
  );
  assert.equal(pyRepr({ a: [1, new PyFloat(2), "it's", null, false] }), `{'a': [1, 2.0, "it's", None, False]}`);
  assert.equal(renderResult(null), "None");
  assert.equal(renderResult([1, "x"]), "[1, 'x']");
  assert.equal(renderResult("plain text"), "plain text");
  assert.equal(renderResult(true), "True");
  // json.dumps fails on Ellipsis, so BFCL falls back to str(dict).
  assert.equal(renderResult({ watchlist: ["NVDA", PyEllipsis.value] }), "{'watchlist': ['NVDA', Ellipsis]}");
});

// python3 -c 'print(f"{1.125:.2f}", f"{1.135:.2f}", f"{0.125:.2f}", f"{2.675:.2f}", round(2.675, 2), round(0.125, 2), round(1234.5678, 2))'
Deno.test("formatFixed and pyRound round the exact binary value half to even, as Python", () => {
  assert.deepEqual(
    [formatFixed(1.125, 2), formatFixed(1.135, 2), formatFixed(0.125, 2), formatFixed(2.675, 2)],
    ["1.12", "1.14", "0.12", "2.67"],
  );
  assert.deepEqual([pyRound(2.675, 2), pyRound(0.125, 2), pyRound(1234.5678, 2)], [2.67, 0.12, 1234.57]);
  assert.deepEqual([floatRepr(5), floatRepr(1e16), floatRepr(1e-5), floatRepr(0.0001), floatRepr(-0)], [
    "5.0",
    "1e+16",
    "1e-05",
    "0.0001",
    "-0.0",
  ]);
});

// python3 -c 'class A:
//   def f(self, a, b, c=1): pass
// A().f()  # and the other calls below'
Deno.test("bindArgs fails with CPython's TypeError texts", () => {
  const params = ["a", "b", ["c", 1]] as const;
  const err = (kw: Record<string, unknown>, pos: unknown[] = []) => {
    try {
      bindArgs("A", "f", params, kw, pos);
    } catch (e) {
      return (e as Error).message;
    }
    return "no error";
  };
  assert.equal(err({}), "A.f() missing 2 required positional arguments: 'a' and 'b'");
  assert.equal(err({ a: 1 }), "A.f() missing 1 required positional argument: 'b'");
  assert.equal(err({}, [1, 2, 3, 4]), "A.f() takes from 3 to 4 positional arguments but 5 were given");
  assert.equal(err({ d: 4 }, [1, 2]), "A.f() got an unexpected keyword argument 'd'");
  assert.equal(err({ a: 4 }, [1, 2]), "A.f() got multiple values for argument 'a'");
  assert.equal(err({}, [1, 2]), "no error");
  assert.deepEqual(bindArgs("A", "f", params, { b: 2 }, [1]), { a: 1, b: 2, c: 1 });
  assert.throws(
    () => bindArgs("B", "g", ["a", "b", "c"], {}),
    /B\.g\(\) missing 3 required positional arguments: 'a', 'b', and 'c'/,
  );
});

Deno.test("parsePyJson keeps 1.0 a float and 1 an int", () => {
  const v = parsePyJson('{"a": 1.0, "b": 2, "c": [3.5, 1e2]}') as Record<string, unknown>;
  assert.ok(v.a instanceof PyFloat && v.a.value === 1);
  assert.equal(v.b, 2);
  assert.equal(renderResult(v), '{"a": 1.0, "b": 2, "c": [3.5, 100.0]}');
});
