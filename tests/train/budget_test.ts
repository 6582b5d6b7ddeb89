// The failure budget of RL steps, the scoring of evaluations over what they played, and the exit codes of stops
// (issue 32), without a GPU.
import assert from "node:assert/strict";
import { errorKind, errorMix, FailureBudget, mixText } from "../../src/train/budget.ts";
import { collapsedEntropy } from "../../src/train/divergence.ts";
import { scoreEpisodes } from "../../src/train/eval.ts";
import { diskFullStop, RunDiverged, RunStopped } from "../../src/train/stops.ts";
import { exitCodeOf, humanMessage } from "../../src/command/args.ts";
import type { Finish, Trajectory } from "../../src/rollout/trajectory.ts";

function episode(task: number, finish: Finish, o: { success?: boolean; error?: string } = {}): Trajectory {
  const played = finish !== "env_failure" && finish !== "prompt_overflow";
  return {
    task,
    group: task,
    seed: 0,
    promptIds: [],
    responseIds: [],
    mask: [],
    logprobs: [],
    reward: played ? (o.success ? 1 : 0) : null,
    success: o.success ?? false,
    rounds: 1,
    finish,
    firstObservation: "",
    turns: [],
    error: o.error,
  };
}

const garbage = "POST /step (http://127.0.0.1:4001/step): the answer is not JSON";
const http500 = "POST /create (http://127.0.0.1:4002/create): HTTP 500";

Deno.test("errors are told apart by kind and by server", () => {
  assert.equal(errorKind(http500), "HTTP 500");
  assert.equal(errorKind(garbage), "not JSON");
  assert.equal(errorKind("GET /x (http://h:1/x): no answer within 60000 ms"), "timeout");
  const mix = errorMix([garbage, garbage, http500]);
  assert.deepEqual(mix, { "http://127.0.0.1:4001": { "not JSON": 2 }, "http://127.0.0.1:4002": { "HTTP 500": 1 } });
  assert.equal(mixText(mix), "http://127.0.0.1:4001 (not JSON x2); http://127.0.0.1:4002 (HTTP 500 x1)");
});

Deno.test("the failure budget stops a step retried too often, too many abandoned steps, and a long streak", () => {
  let now = 0;
  const failing = [episode(1, "env_failure", { error: garbage }), episode(2, "done")];
  const b = new FailureBudget({ maxStepRetries: 2, maxAbandoned: 3, outageMs: 60_000, now: () => now });
  assert.equal(b.abandon(failing).spent, undefined);
  assert.equal(b.abandon(failing).spent, undefined);
  const third = b.abandon(failing);
  assert.match(third.spent!, /abandoned 3 times in a row \(env.max_step_retries=2\)/);
  assert.deepEqual(b.mix, { "http://127.0.0.1:4001": { "not JSON": 3 } });

  const run = new FailureBudget({ maxStepRetries: 5, maxAbandoned: 2, outageMs: 60_000, now: () => now });
  run.abandon(failing);
  run.counted();
  run.abandon(failing);
  run.counted();
  assert.match(run.abandon(failing).spent!, /3 steps were abandoned in this run \(env.max_abandoned_steps=2\)/);

  // A server that answers creates but keeps failing episodes: the clock runs over the streak, not per step.
  const clock = new FailureBudget({ maxStepRetries: 100, maxAbandoned: 100, outageMs: 60_000, now: () => now });
  now = 0;
  clock.abandon(failing);
  now = 30_000;
  assert.equal(clock.abandon(failing).spent, undefined);
  assert.equal(clock.outageLeftMs(), 30_000);
  now = 61_000;
  assert.match(clock.abandon(failing).spent!, /kept failing for 1\.0 min \(env.outage_minutes=1\)/);
  clock.counted();
  assert.equal(clock.outageLeftMs(), 60_000);
});

Deno.test("an evaluation's rates are over the episodes it played; overflows, failures and truncations counted apart", () => {
  const r = scoreEpisodes(
    [
      episode(1, "done", { success: true }),
      episode(1, "prompt_overflow"),
      episode(2, "length"),
      episode(2, "env_failure", { error: http500 }),
    ],
    2,
    () => "all",
  );
  assert.equal(r.episodes, 2);
  assert.equal(r.avg, 0.5);
  assert.equal(r.overflows, 1);
  assert.equal(r.envFailures, 1);
  assert.equal(r.truncated, 1);
  const none = scoreEpisodes([episode(1, "prompt_overflow"), episode(2, "prompt_overflow")], 1, () => "all");
  assert.equal(none.episodes, 0);
  assert.equal(none.overflows, 2);
});

Deno.test("a full disk stops with exit 3 and the resume command when a checkpoint exists, and says where", () => {
  const full = new Error("No space left on device (os error 28): write 'runs/a/metrics.jsonl'");
  const stop = diskFullStop(full, "runs/a", "runs/a/checkpoints/rl-step-000004");
  assert.ok(stop instanceof RunStopped);
  assert.equal(exitCodeOf(stop), 3);
  assert.match(stop.message, /disk holding runs\/a is full[\s\S]*rl-step-000004\) is complete[\s\S]*--resume runs\/a$/);
  assert.equal(humanMessage(stop), stop.message, "said as written");
  const early = diskFullStop(full, "runs/a", undefined);
  assert.equal(exitCodeOf(early), 2);
  assert.match((early as Error).message, /No checkpoint was saved yet/);
  const other = new TypeError("bad");
  assert.equal(diskFullStop(other, "runs/a", "x"), other);
  assert.equal(exitCodeOf(new RunDiverged("d")), 2);
});

Deno.test("a policy whose entropy climbs to the uniform bound has collapsed; one that starts there has not", () => {
  const bound = Math.log(1000);
  assert.match(collapsedEntropy(2, 0.995 * bound, 1000)!, /rose from 2\.000 to .* ln 1000/);
  assert.equal(collapsedEntropy(2, 0.9 * bound, 1000), undefined);
  assert.equal(collapsedEntropy(0.999 * bound, bound, 1000), undefined, "an untrained model starts uniform");
  assert.equal(collapsedEntropy(2, NaN, 1000), undefined, "a NaN entropy is the skip guard's, not this one's");
});
