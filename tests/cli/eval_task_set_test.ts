// `deno task eval` plays a checkpoint on the task set it was trained on: models/bfcl-base names four generated
// classes and three categories in its crucible.json, and the evaluation says so and plays that set unless a
// --task-option names a key; checkpoints that disagree on a set key stop the command with the key.
import assert from "node:assert/strict";
import { noGpu } from "../no_gpu.ts";
import { runCli } from "../subprocess.ts";
import { type AgentSettings, trainedTaskSet } from "../../src/train/agent_settings.ts";

const BFCL = { name: "bfcl", setOptions: ["data_dir", "generated_classes", "generated_categories"] };

function agent(task: string, options: Record<string, unknown>): AgentSettings {
  return {
    version: 1,
    task,
    prompt: { user: "u", assistant: "a" },
    task_options: options,
    max_rounds: 1,
    max_tokens_per_turn: 1,
    max_prompt_length: 1,
    max_response_length: 1,
    temperature: 0,
  };
}

Deno.test("trainedTaskSet: the set keys of the task's checkpoints, less the flags' and unset ones", () => {
  const a = agent("bfcl", { data_dir: null, generated_classes: ["MathAPI"], generated_categories: null, rewards: "x" });
  assert.deepEqual(trainedTaskSet(BFCL, [a], new Set()), { generated_classes: ["MathAPI"] });
  assert.deepEqual(trainedTaskSet(BFCL, [a, undefined, agent("textcraft", {})], new Set()), {
    generated_classes: ["MathAPI"],
  });
  assert.deepEqual(trainedTaskSet(BFCL, [a], new Set(["generated_classes"])), {});
  assert.deepEqual(trainedTaskSet({ name: "textcraft" }, [a], new Set()), {});
  const b = agent("bfcl", { generated_classes: ["TicketAPI"] });
  assert.throws(() => trainedTaskSet(BFCL, [a, b], new Set()), /generated_classes.*--task-option generated_classes=/);
  assert.deepEqual(trainedTaskSet(BFCL, [a, b], new Set(["generated_classes"])), {});
});

Deno.test({
  name: "deno task eval on models/bfcl-base plays and names the set it was trained on, unless a flag says otherwise",
  ignore: noGpu,
  async fn() {
    const own = await runCli(["eval", "--model", "models/bfcl-base", "--task", "bfcl", "--limit", "1", "--json"]);
    assert.equal(own.code, 0, own.err);
    assert.match(own.err, /Task set from the checkpoint's crucible.json: generated_classes=\["GorillaFileSystem",/);
    assert.match(
      own.err,
      /test: 100 tasks of Crucible's generated tasks \(classes GorillaFileSystem, MathAPI, TwitterAPI, TicketAPI; categories base, miss_param, miss_func\)/,
    );
    const flag = await runCli([
      "eval",
      "--model",
      "models/bfcl-base",
      "--task",
      "bfcl",
      "--limit",
      "1",
      "--json",
      "--task-option",
      'generated_categories=["base"]',
    ]);
    assert.equal(flag.code, 0, flag.err);
    assert.doesNotMatch(flag.err, /generated_categories=\["base","miss_param"/);
    assert.match(flag.err, /classes GorillaFileSystem, MathAPI, TwitterAPI, TicketAPI; categories base\)/);
    assert.equal(JSON.parse(flag.out.trim().split("\n").pop()!).perTask[0].category, "base");
  },
});
