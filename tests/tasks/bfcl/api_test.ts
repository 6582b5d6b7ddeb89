/**
 * The class registry, the shipped tool documents and BFCL's per-call execution rules: every class's public methods
 * are exactly the functions its BFCL document lists (and their parameters the documented ones), instances are fresh
 * per call of newInstance, a method name resolves to the last involved class that has it, and bad names give BFCL's
 * texts.
 */
import assert from "node:assert/strict";
import { CLASS_NAMES, functionDocs, newInstance } from "../../../tasks/bfcl/classes/api.ts";
import { executeCall, methodOwners } from "../../../tasks/bfcl/execute.ts";
import { parseCallList } from "../../../tasks/bfcl/literal.ts";

Deno.test("eight classes, each with exactly the methods and parameters of its BFCL document", () => {
  assert.deepEqual([...CLASS_NAMES].sort(), [
    "GorillaFileSystem",
    "MathAPI",
    "MessageAPI",
    "TicketAPI",
    "TradingBot",
    "TravelAPI",
    "TwitterAPI",
    "VehicleControlAPI",
  ]);
  for (const name of CLASS_NAMES) {
    const api = newInstance(name);
    const docs = functionDocs(name);
    assert.deepEqual(api.methods(), docs.map((d) => d.name).sort(), `${name} methods`);
    for (const doc of docs) {
      const params = api.parameters(doc.name)!;
      assert.deepEqual([...params].sort(), Object.keys(doc.parameters.properties).sort(), `${name}.${doc.name}`);
      for (const r of doc.parameters.required) assert.ok(params.includes(r), `${name}.${doc.name} requires ${r}`);
    }
  }
  assert.throws(() => newInstance("WebSearchAPI"), /Unknown BFCL class WebSearchAPI; known: GorillaFileSystem/);
});

Deno.test("instances are independent: one episode's calls never show in another's", () => {
  const a = newInstance("TicketAPI");
  const b = newInstance("TicketAPI");
  const scenario = { ticket_queue: [], ticket_counter: 1, current_user: "amy" };
  a.loadScenario(scenario);
  b.loadScenario(scenario);
  a.call("create_ticket", { title: "only in a" });
  assert.equal((a.state().ticket_queue as unknown[]).length, 1);
  assert.equal((b.state().ticket_queue as unknown[]).length, 0);
  assert.deepEqual(scenario.ticket_queue, []);
});

Deno.test("executeCall: the last involved class owns a shared name; unknown and refused names give BFCL's texts", () => {
  const fs = newInstance("GorillaFileSystem");
  fs.loadScenario({});
  const math = newInstance("MathAPI");
  const byMethod = methodOwners([fs, math]);
  assert.equal(byMethod.get("ls"), fs);
  const run = (call: string) => executeCall({ byMethod }, parseCallList(`[${call}]`)[0]);
  assert.equal(run("add(a=1, b=2)"), '{"result": 3}');
  assert.equal(run("mean([1, 2])"), '{"result": 1.5}');
  assert.equal(run("print(x=1)"), "Error during execution: name 'print' is not defined");
  assert.equal(run("kill()"), "Error during execution: Function call kill is not allowed.");
  assert.equal(run("add(a=1)"), "Error during execution: MathAPI.add() missing 1 required positional argument: 'b'");
  // Dotted names as BFCL checks them (the name's second part) and as Python's eval fails on them (the first part).
  assert.equal(run("os.kill(pid=1)"), "Error during execution: Function call kill is not allowed.");
  assert.equal(run("cd.remove()"), "Error during execution: Function call remove is not allowed.");
  assert.equal(run("foo.bar(x=1)"), "Error during execution: name 'foo' is not defined");
  assert.equal(run("x.cd(folder='a')"), "Error during execution: name 'x' is not defined");
  assert.equal(run("a.b.c(x=1)"), "Error during execution: name 'a' is not defined");
  // Two classes that share no names: the mapping holds both.
  const twitter = newInstance("TwitterAPI");
  twitter.loadScenario({});
  assert.equal(methodOwners([twitter, math]).get("post_tweet"), twitter);
});
