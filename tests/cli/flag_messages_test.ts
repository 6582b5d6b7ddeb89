// Each message a user meets on a bad command line names the bad value and the fix: an unknown flag gets "did you
// mean", a flag missing its value shows its form, a switch given a value and a stray argument say so, a dead
// --env-url names the URL and the command that starts a server, --split lists the splits, and config --explain
// prints a key's meaning, default and other names, or the nearest keys.
import assert from "node:assert/strict";
import { parseFlags } from "../../src/command/args.ts";
import { main as evaluate } from "../../src/cli/eval.ts";
import { explainKey, keyDocs } from "../../src/config/explain.ts";
import { resolveConfig } from "../../src/config/load.ts";
import { splitIndices } from "../../src/train/setup.ts";
import { textcraft } from "../../tasks/textcraft/mod.ts";
import { runCli } from "../subprocess.ts";

const OPTIONS = {
  model: { type: "string" },
  "env-url": { type: "string", multiple: true },
  json: { type: "boolean" },
  help: { type: "boolean", short: "h" },
} as const;

function parseError(args: string[], allowPositionals = false): string {
  try {
    parseFlags("deno task eval", { args, options: OPTIONS, allowPositionals });
  } catch (e) {
    assert.ok(e instanceof RangeError, String(e));
    return e.message;
  }
  throw new Error(`${args.join(" ")} parsed`);
}

Deno.test("an unknown flag gets the nearest known one and the command's flags", () => {
  const m = parseError(["--modle", "x"]);
  assert.match(m, /^deno task eval has no flag --modle; did you mean --model\? Its flags: --model, --env-url, --json/);
  assert.match(m, /see deno task eval --help\)$/);
  assert.doesNotMatch(m, /'/, "no raw parseArgs quoting");
  assert.match(parseError(["--env-urls=http://x"]), /has no flag --env-urls; did you mean --env-url\?/);
  assert.match(parseError(["--zzzzzzzz"]), /has no flag --zzzzzzzz\. Its flags:/);
});

Deno.test("a flag missing its value shows the form it takes", () => {
  assert.match(parseError(["--model"]), /^--model needs a value: --model VALUE, or --model=VALUE/);
});

Deno.test("a switch given a value says it takes none", () => {
  assert.match(parseError(["--json=yes"]), /^--json is a switch and takes no value: write --json alone/);
});

Deno.test("a stray argument says the command takes none without a flag", () => {
  assert.match(parseError(["models/x"]), /^deno task eval takes no argument "models\/x" without a flag; its flags:/);
});

Deno.test("good flags parse as parseArgs parses them", () => {
  const { values } = parseFlags("deno task eval", { args: ["--model", "m", "--json", "-h"], options: OPTIONS });
  assert.deepEqual({ ...values }, { model: "m", json: true, help: true });
});

Deno.test("the real command line: deno task eval --modle gets did you mean, exit 2", async () => {
  const r = await runCli(["eval", "--modle", "models/crucible-tiny"]);
  assert.equal(r.code, 2);
  assert.match(r.err, /^error: deno task eval has no flag --modle; did you mean --model\?/m);
});

Deno.test("--env-url to nothing names the URL and how to start a server there", async () => {
  const listener = Deno.listen({ hostname: "127.0.0.1", port: 0 });
  const port = (listener.addr as Deno.NetAddr).port;
  listener.close(); // a loopback port that nothing listens on
  const url = `http://127.0.0.1:${port}`;
  await assert.rejects(
    evaluate(["--model", "models/crucible-tiny", "--env-url", url, "--limit", "1"]),
    (e: Error) => {
      assert.match(e.message, new RegExp(`The textcraft server at ${url} does not answer`));
      assert.match(e.message, new RegExp(`Start one there with \`deno task serve textcraft --port ${port}\``));
      assert.match(e.message, /leave out --env-url \(config env\.urls\)/);
      return true;
    },
  );
});

Deno.test("--split nosuch lists the task's splits and the item-file way", async () => {
  await assert.rejects(
    evaluate(["--model", "models/crucible-tiny", "--split", "nosuch"]),
    /^RangeError: --split nosuch: textcraft has no such split; its splits are (train, test|test, train); or give --items FILE/,
  );
});

Deno.test("a config naming no such split lists the splits too", async () => {
  const c = resolveConfig({ text: "", name: "t" }, ["data.train_split=nosuch"]);
  await assert.rejects(
    splitIndices(c, { task: textcraft }, "train"),
    /textcraft has no built-in split "nosuch" \(data\.train_split\); its splits are .*train.*\. Or give data\.train_items=FILE/,
  );
});

Deno.test("config --explain prints a key's meaning, type, default and verl and TRL names", () => {
  const text = explainKey("actor.lr");
  assert.match(text, /^actor\.lr\n {2}meaning: The policy's \(actor's\) learning rate in RL\.\n/);
  assert.match(text, /\n {2}type: {4}number\n {2}default: 0\.000001\n/);
  assert.match(text, /\n {2}verl: {4}actor_rollout_ref\.actor\.optim\.lr\n {2}TRL: {5}learning_rate\n/);
  assert.match(explainKey("actor_rollout_ref.actor.optim.lr"), /^actor\.lr \(verl's actor_rollout_ref/);
  assert.match(explainKey("rollout.kv_cache"), /type: {4}one of auto, f32, f16\n {2}default: "auto"/);
  assert.match(explainKey("actor"), /^actor\n.*\n {2}actor\.lr: The policy's/);
});

Deno.test("config --explain of an unknown key names the nearest key and its siblings", () => {
  assert.throws(
    () => explainKey("trainer.eval_limt"),
    /Unknown config key "trainer\.eval_limt"; did you mean "trainer\.eval_limit"\? The keys of trainer are: total_steps/,
  );
});

Deno.test("every config key has a meaning in src/config/schema.ts", () => {
  const docs = keyDocs();
  assert.ok(docs.size > 100, `${docs.size} keys read`);
  for (const key of ["model.path", "actor.clip_ratio_high", "data.prompt_sampling.floor", "sft.lr_schedule.type"]) {
    assert.ok(docs.has(key), key);
  }
  const missing = [...docs].filter(([, d]) => !d).map(([k]) => k);
  assert.deepEqual(missing, []);
});

Deno.test("deno task config --explain runs from the command line", async () => {
  const r = await runCli(["config", "--explain", "rollout.n"]);
  assert.equal(r.code, 0, r.err);
  assert.match(r.out, /^rollout\.n\n {2}meaning: Samples per prompt/);
  assert.match(r.out, /TRL: {5}num_generations/);
});
