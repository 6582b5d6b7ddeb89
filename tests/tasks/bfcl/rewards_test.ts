// EnvTuning's pieces: the stage 1-2 and stage 3 rewards over per-step codes (worked by hand from format_reward.py
// and bfcl_reward.py), its <think>/<tool_call>/<answer> layout with its error texts, and an episode under its turn
// rules: codes in info, 5 attempts a turn, a call on a turn without ground truth scores 0 and is not run, and
// augmented feedback switched off.
import assert from "node:assert/strict";
import { decodeCalls, encodeCalls } from "../../../tasks/bfcl/calls.ts";
import { newInstance } from "../../../tasks/bfcl/classes/api.ts";
import { BfclEpisode, UNREADABLE_REPLY } from "../../../tasks/bfcl/episode.ts";
import type { BfclEntry } from "../../../tasks/bfcl/entries.ts";
import { callText, parseCallList } from "../../../tasks/bfcl/literal.ts";
import { formatStageReward, progressReward } from "../../../tasks/bfcl/rewards.ts";

Deno.test("EnvTuning's stage rewards over per-step codes", () => {
  // 5 rounds, 1 format error, 1 correct and 1 failed call step: 1 * (4/5 + 1/2).
  assert.ok(Math.abs(formatStageReward([-1, -2, 1, -3, 0]) - 1.3) < 1e-12);
  assert.equal(formatStageReward([-3, 1, 0]), 0); // never called a tool
  assert.equal(formatStageReward([-1, -1, 1]), 2);
  assert.equal(formatStageReward([]), 0);
  assert.equal(progressReward([-1, -2, 1, -3, 0]), 0.5);
  assert.equal(progressReward([-1, -1]), 0);
  assert.equal(progressReward([1, -1, 1, 1]), 1);
});

Deno.test("EnvTuning's layout: one think, then one tool_call list or one answer, nothing outside", () => {
  const ok = decodeCalls(
    '<think>go</think>\n<tool_call>[{"name": "cd", "arguments": {"folder": "a"}}]</tool_call>',
    "envtuning",
  );
  assert.deepEqual(ok.kind === "calls" && ok.calls.map(callText), ["cd(folder='a')"]);
  assert.deepEqual(decodeCalls("<think>x</think><answer>done</answer>", "envtuning"), { kind: "answer" });
  const cases: [string, string][] = [
    ["<answer>a</answer>", "Error: Missing <think></think> tags"],
    [
      "<think>a</think><think>b</think><answer>c</answer>",
      "Error: Multiple <think></think> tag pairs found. Only one pair is allowed.",
    ],
    [
      "<think>a</think><tool_call>[]</tool_call><answer>c</answer>",
      "Error: Response cannot contain both <tool_call> and <answer> tags",
    ],
    ["<think>a</think>", "Error: Response must contain either <tool_call> or <answer> tags"],
    [
      "<think>a</think><answer>c</answer> thanks",
      "Error: Response must not contain text outside the required XML tags",
    ],
  ];
  for (const [text, message] of cases) assert.deepEqual(decodeCalls(text, "envtuning"), { kind: "error", message });
  const bad = decodeCalls("<think>a</think><tool_call>[{name: 1}]</tool_call>", "envtuning");
  assert.match(bad.kind === "error" ? bad.message : "", /^Error: Invalid JSON inside <tool_call>/);
  const calls = parseCallList("[cd(folder='a'), ls(a=True)]");
  const round = decodeCalls(encodeCalls(calls, "envtuning"), "envtuning");
  assert.deepEqual(round.kind === "calls" && round.calls.map(callText), calls.map(callText));
});

const ENTRY: BfclEntry = {
  id: "multi_turn_miss_param_0",
  category: "miss_param",
  question: [[{ role: "user", content: "Make a folder." }], [{ role: "user", content: "Call it 'x'." }], [{
    role: "user",
    content: "Go in.",
  }]],
  initialConfig: { GorillaFileSystem: { root: { home: { type: "directory", contents: {} } } } },
  involvedClasses: ["GorillaFileSystem"],
  missedFunction: {},
  groundTruth: [[], ["mkdir(dir_name='x')"], ["cd(folder='x')"]],
  longContext: false,
};
const say = (t: string) => `<think>t</think><answer>${t}</answer>`;
const call = (c: string) => `<think>t</think><tool_call>${c}</tool_call>`;

Deno.test("an EnvTuning episode: codes, an empty-ground-truth turn, and the progress and format rewards", () => {
  const play = (rewards: "format" | "progress") => {
    const ep = new BfclEpisode(ENTRY, {}, newInstance, { format: "envtuning", rewards });
    ep.reset();
    const first = ep.step(call('[{"name": "mkdir", "arguments": {"dir_name": "y"}}]'));
    assert.equal(first.info.code, 0); // a call on the turn without ground truth: scored 0, not run
    assert.match(first.observation, /^\(Warning: .*\nCall it 'x'\.$/s);
    assert.equal(ep.step("no tags").info.code, -3);
    assert.equal(ep.step(call('[{"name": "mkdir", "arguments": {"dir_name": "x"}}]')).info.code, -1);
    assert.equal(ep.step(say("made")).info.code, 1); // the state matches: mkdir(y) never ran
    // A raised error is -2; a class's {"error": ...} answer counts as a run call in EnvTuning (-1).
    assert.equal(ep.step(call('[{"name": "cd", "arguments": {"dir": "x"}}]')).info.code, -2);
    const end = ep.step(say("done"));
    assert.equal(end.info.code, 0);
    assert.equal(end.done, true);
    assert.deepEqual(ep.codes, [0, -3, -1, 1, -2, 0]);
    return end.reward;
  };
  assert.equal(play("progress"), 1 / 3);
  // 6 rounds, 1 format error, 1 correct and 1 failed call: 5/6 + 1/2.
  assert.ok(Math.abs(play("format") - (5 / 6 + 0.5)) < 1e-12);
});

Deno.test("under EnvTuning's rules a call on a turn without ground truth fails the entry, as BFCL's checker fails it", () => {
  const play = (strictEmptyTurns: boolean) => {
    const ep = new BfclEpisode(ENTRY, {}, newInstance, { format: "envtuning", rewards: "progress", strictEmptyTurns });
    ep.reset();
    const first = ep.step(call('[{"name": "mkdir", "arguments": {"dir_name": "y"}}]'));
    ep.step(call('[{"name": "mkdir", "arguments": {"dir_name": "x"}}]'));
    ep.step(say("made"));
    ep.step(call('[{"name": "cd", "arguments": {"folder": "x"}}]'));
    const end = ep.step(say("in"));
    assert.equal(end.done, true);
    assert.deepEqual(ep.codes, [0, -1, 1, -1, 1]);
    assert.ok(Math.abs(end.reward - 2 / 3) < 1e-12, `progress ${end.reward}`);
    return { first: first.info.verdict, passed: end.info.passed };
  };
  const strict = play(true);
  assert.deepEqual(strict.first, {
    turn: 0,
    valid: false,
    error_type: "multi_turn:irrelevance_error:decoder_success",
    reason: "Model outputs valid function calls when it should not for turn 0.",
  });
  assert.equal(strict.passed, false);
  // BFCL v4's runner leaves the rule off: the later turns pass, and so does the entry.
  assert.deepEqual(play(false), { first: { turn: 0, valid: true }, passed: true });
});

Deno.test("EnvTuning's 5 attempts a turn, then the next turn; feedback off answers a bare notice", () => {
  const ep = new BfclEpisode(ENTRY, {}, newInstance, { format: "envtuning", rewards: "progress", feedback: false });
  ep.reset();
  ep.step(say("I need a name."));
  let step = ep.step("junk");
  assert.equal(step.observation, UNREADABLE_REPLY);
  for (let i = 0; i < 5; i++) step = ep.step("junk");
  assert.equal(step.done, false);
  assert.equal(step.info.verdict?.turn, 1);
  assert.equal(step.info.verdict?.valid, false);
  assert.ok(step.observation.endsWith("Go in."));
});
