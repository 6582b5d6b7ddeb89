// BFCL call parsing: the literal parser (never an evaluator, floats kept apart from ints), and
// the three reply forms (BFCL's python list, Qwen2.5's <tool_call> JSON, the tiny one-line form) with their errors.
import assert from "node:assert/strict";
import { decodeCalls, detectFormat, encodeCalls } from "../../../tasks/bfcl/calls.ts";
import { callText, parseCallList, parseLiteral } from "../../../tasks/bfcl/literal.ts";
import { PyFloat } from "../../../tasks/bfcl/classes/py.ts";

Deno.test("the literal parser reads Python literals and keeps floats and tuples", () => {
  const [c] = parseCallList(`f(a=1, b=2.0, c='x\\'y', d=[None, True, -3], e={'k': (1, 2)}, g="""t""", h=name)`);
  assert.equal(c.name, "f");
  assert.equal(callText(c), `f(a=1, b=2.0, c="x'y", d=[None, True, -3], e={'k': [1, 2]}, g='t', h='name')`);
  assert.ok(c.args.b instanceof PyFloat);
  assert.deepEqual(parseLiteral('{"a": [true, null, 1.5, 2.0]}', { json: true }), {
    a: [true, null, 1.5, new PyFloat(2)],
  });
  assert.deepEqual(parseCallList("[]"), []);
  assert.deepEqual(parseCallList("sort('final_report.pdf')")[0].positional, ["final_report.pdf"]);
});

Deno.test("the literal parser refuses what is not a literal, naming the offset", () => {
  for (const bad of ["f(a=g(1))", "f(a=1+2)", "f(a=os.system)", "f(a=1, a=2)", "f(a=1, 2)", "f(a='x)", "f(a=1) junk"]) {
    assert.throws(
      () => parseCallList(bad),
      (e: Error) => e instanceof SyntaxError && /offset \d+/.test(e.message),
      bad,
    );
  }
});

Deno.test("BFCL's python form: brackets optional, positional arguments kept, text without a call is an answer", () => {
  const d = decodeCalls("```\n[cd(folder='document'), mkdir(dir_name='temp')]\n```");
  assert.equal(d.kind, "calls");
  assert.deepEqual(d.kind === "calls" && d.calls.map(callText), ["cd(folder='document')", "mkdir(dir_name='temp')"]);
  // BFCL closes a missing bracket itself.
  assert.equal(decodeCalls("[cd(folder='x')").kind, "calls");
  const bare = decodeCalls("ls(a=True)");
  assert.deepEqual(bare.kind === "calls" && bare.calls.map(callText), ["ls(a=True)"]);
  // Positional arguments are kept for Python's binding (BFCL's ground truth writes sort('final_report.pdf')).
  const pos = decodeCalls("[sort('x'), post_tweet('Hi', tags=['#a'])]");
  assert.deepEqual(pos.kind === "calls" && pos.calls.map((c) => [c.positional, c.args]), [
    [["x"], {}],
    [["Hi"], { tags: ["#a"] }],
  ]);
  assert.deepEqual(decodeCalls("The report was moved."), { kind: "answer" });
  assert.deepEqual(decodeCalls("[]"), { kind: "answer" });
});

Deno.test("BFCL's python form: text around the calls or a broken call is a format error", () => {
  for (const bad of ["Sure! [cd(folder='x')]", "[cd(folder='x'", "[cd(folder=x y)]"]) {
    const d = decodeCalls(bad, "python");
    assert.equal(d.kind, "error", bad);
    assert.match(d.kind === "error" ? d.message : "", /not a list of function calls/);
  }
});

Deno.test("Qwen2.5's <tool_call> form: one JSON block per call, floats kept, text around allowed", () => {
  const text = 'Let me look.\n<tool_call>\n{"name": "add", "arguments": {"a": 1.0, "b": 2}}\n</tool_call>\n' +
    '<tool_call>\n{"name": "ls", "arguments": "{\\"a\\": true}"}\n</tool_call>';
  assert.equal(detectFormat(text), "qwen");
  const d = decodeCalls(text);
  assert.deepEqual(d.kind === "calls" && d.calls.map(callText), ["add(a=1.0, b=2)", "ls(a=True)"]);
  assert.equal(decodeCalls('<tool_call>{"name": "ls", "arguments": {}', "qwen").kind, "error");
  assert.equal(decodeCalls('<tool_call>{"name": ls}</tool_call>', "qwen").kind, "error");
  assert.equal(decodeCalls('<tool_call>{"arguments": {}}</tool_call>', "qwen").kind, "error");
  assert.equal(decodeCalls('<tool_call>{"name": "ls", "arguments": [1]}</tool_call>', "qwen").kind, "error");
  assert.deepEqual(decodeCalls("No tool is needed.", "qwen"), { kind: "answer" });
});

Deno.test("the tiny form: one `call:` line per call with JSON values", () => {
  const text = 'call: cd folder="docs"\ncall: add a=1.5 b=2\ncall: ls';
  assert.equal(detectFormat(text), "tiny");
  const d = decodeCalls(text);
  assert.deepEqual(d.kind === "calls" && d.calls.map(callText), ["cd(folder='docs')", "add(a=1.5, b=2)", "ls()"]);
  assert.equal(decodeCalls('call: cd folder=docs"', "tiny").kind, "error");
  assert.equal(decodeCalls("call: cd folder", "tiny").kind, "error");
  assert.deepEqual(decodeCalls("done", "tiny"), { kind: "answer" });
});

Deno.test("encodeCalls writes each form so that decodeCalls reads the same calls back", () => {
  const calls = parseCallList("[add(a=1.0, b=[1, 'x']), ls(a=True)]");
  for (const f of ["python", "qwen", "tiny"] as const) {
    const d = decodeCalls(encodeCalls(calls, f), f);
    assert.deepEqual(d.kind === "calls" && d.calls.map(callText), calls.map(callText), f);
  }
});
