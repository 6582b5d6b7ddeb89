// The play page's depth note: the agent's success by depth is read from its run's evals.jsonl (a checkpoint) or its
// model card (models/crucible-tiny's README.md as shipped), and a task deeper than the agent can plan gets a warning.
import assert from "node:assert/strict";
import { depthNote, readDepthSkill } from "../../src/play/skill.ts";

Deno.test("the shipped tiny model's card gives its success by depth", async () => {
  const skill = await readDepthSkill("models/crucible-tiny/");
  assert.ok(skill);
  assert.match(skill.source, /^models\/crucible-tiny\/README\.md \(64 held-out synthetic worlds\)$/);
  assert.deepEqual(skill.byDepth, { "1": 0.25, "2": 0, "3": 0, "4": 0 });
});

Deno.test("a checkpoint's run folder gives the last evaluation with results by depth", async () => {
  const run = await Deno.makeTempDir();
  try {
    const ckpt = `${run}/checkpoints/final`;
    await Deno.mkdir(ckpt, { recursive: true });
    const line = (step: number, d1: number, d2: number) =>
      JSON.stringify({ phase: "rl", step, avg: d1, byCategory: { "depth 1": { avg: d1 }, "depth 2": { avg: d2 } } });
    await Deno.writeTextFile(
      `${run}/evals.jsonl`,
      [line(10, 0.5, 0), line(20, 0.75, 0.125), JSON.stringify({ phase: "sft", step: 21, avg: 1, byCategory: {} })]
        .join("\n") + '\n{"cut',
    );
    const skill = await readDepthSkill(ckpt);
    assert.deepEqual(skill, { source: `${run}/evals.jsonl (step 20)`, byDepth: { "1": 0.75, "2": 0.125 } });
    assert.equal(await readDepthSkill(run), undefined, "a folder that is neither a checkpoint nor a card");
  } finally {
    await Deno.remove(run, { recursive: true });
  }
});

Deno.test("a task deeper than the agent can plan gets a warning naming the evaluation; others a plain note", () => {
  const skill = { source: "m/README.md", byDepth: { "1": 0.25, "2": 0 } };
  const deep = depthNote(2, skill);
  assert.equal(deep.warn, true);
  assert.match(
    deep.text,
    /^This agent solved none of the depth-2 tasks in its evaluation \(m\/README\.md\): it cannot/,
  );
  assert.match(deep.text, /It does best at depth 1 \(25%\)\.$/);
  const never = depthNote(4, skill);
  assert.equal(never.warn, true);
  assert.match(never.text, /never evaluated at depth 4 \(m\/README\.md covers depth 1, 2\): it may not plan this deep/);
  assert.deepEqual(depthNote(1, skill), {
    text: "This agent solved 25% of depth-1 tasks in its evaluation (m/README.md).",
    warn: false,
  });
  const unknown = depthNote(3, undefined);
  assert.equal(unknown.warn, false);
  assert.match(unknown.text, /No evaluation of this agent by depth was found beside it; `deno task eval/);
  assert.deepEqual(depthNote(0, skill), { text: "", warn: false });
});
