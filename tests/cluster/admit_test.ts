// The learner's checks on a played group (src/cluster/admit.ts), message by message with no server: a well-formed
// group is let in unchanged, and each forgery is refused with its own reason (out-of-vocabulary ids, NaN log-probs,
// a reward of 1e9, a future version, a replayed message, an oversized one, ...). Each case breaks one thing of the
// good group, so each reason is shown to be what refuses it.
import assert from "node:assert/strict";
import { admit, type AdmitContext, REASONS } from "../../src/cluster/admit.ts";
import { type GroupMessage, groupMessageId, type PromptMessage } from "../../src/cluster/messages.ts";
import { rewardRange } from "../../src/task/task.ts";
import { TASKS } from "../../tasks/mod.ts";

const options = {
  maxRounds: 3,
  maxTokensPerTurn: 4,
  maxResponseLength: 8,
  maxPromptLength: 6,
  sampling: { temperature: 1 },
  stopIds: [2],
};
const prompt: PromptMessage = {
  run: "run-1",
  id: "run-1-s1-g0-r0",
  step: 1,
  group: 0,
  groups: 1,
  task: 7,
  seeds: [11, 12],
  minVersion: 0,
  options,
};

function episode(seed: number) {
  return {
    task: 7,
    group: 0,
    seed,
    promptIds: [1, 5, 9],
    responseIds: [4, 2, 30, 31, 6, 2],
    mask: [1, 1, 0, 0, 1, 1],
    logprobs: [-0.5, -1.25, 0, 0, -3, -0.125],
    reward: 1,
    success: true,
    rounds: 2,
    finish: "done" as const,
    firstObservation: "Goal: craft a stick.",
    turns: [
      { text: "craft", action: "craft", observation: "Crafted", reward: 0, anchor: "5c0d4ed7d6f64a8e" },
      { text: "go", action: "go", observation: "Done", reward: 1, anchor: "0f4b1e6a22c3d9b7" },
    ],
    version: 0,
  };
}

function good(): GroupMessage {
  return {
    run: "run-1",
    id: prompt.id,
    step: 1,
    group: 0,
    version: 0,
    worker: "a",
    deliveries: 1,
    seconds: { play: 1, prefill: 0.1, decode: 0.5, env: 0.2 },
    trajectories: [episode(11), episode(12)],
  };
}

const taken = new Set<string>();
const ctx: AdmitContext = {
  runId: "run-1",
  vocabSize: 32,
  rewardRange: rewardRange(TASKS.textcraft, {}),
  maxBytes: 4096,
  prompt: (step, group) => (step === 1 && group === 0 ? { message: prompt, ids: new Set([prompt.id]) } : undefined),
  published: (v) => v === 0,
  seen: (step, group) => taken.has(`${step}-${group}`),
  dropped: (name) => name === "evil",
};

const enc = (v: unknown) => new TextEncoder().encode(typeof v === "string" ? v : JSON.stringify(v));
const SUBJECT = "crucible.trajectories.a";

/** The verdict on `bytes` sent on `subject` under message id `id` (default: the one its sender's worker gives it). */
function send(bytes: Uint8Array, subject = SUBJECT, id?: string) {
  return admit(
    { data: bytes, subject, id: id ?? groupMessageId(subject.slice(subject.lastIndexOf(".") + 1), bytes) },
    ctx,
  );
}

/** The verdict on the good group changed by `edit`, sent on `subject`. */
function verdict(edit: (g: GroupMessage & Record<string, unknown>) => void, subject = SUBJECT) {
  const g = good() as GroupMessage & Record<string, unknown>;
  edit(g);
  return send(enc(g), subject);
}

function refusedFor(edit: (g: GroupMessage & Record<string, unknown>) => void, subject = SUBJECT): string {
  const v = verdict(edit, subject);
  assert.equal(v.ok, false, "let in");
  return v.ok ? "" : v.reason;
}

Deno.test("a well-formed group is let in as sent", () => {
  const v = send(enc(good()));
  assert.ok(v.ok, JSON.stringify(v));
  assert.deepEqual(v.group, good());
  // An environment failure has no reward, and that is no forgery.
  assert.ok(verdict((g) => Object.assign(g.trajectories[0], { reward: null, finish: "env_failure" })).ok);
  // BFCL's format reward goes to 2; TextCraft's stops at 1.
  assert.deepEqual(rewardRange(TASKS.bfcl, { rewards: "format" }), [0, 2]);
  assert.deepEqual(rewardRange(TASKS.textcraft, {}), [0, 1]);
});

Deno.test("the forgeries of the issue are refused, each by its own reason", () => {
  const t = (g: GroupMessage) => g.trajectories[1];
  assert.equal(refusedFor((g) => (t(g).responseIds[2] = 32)), "token_ids", "an id past the vocabulary");
  assert.equal(refusedFor((g) => (t(g).promptIds[0] = -1)), "token_ids", "a negative id");
  assert.equal(refusedFor((g) => (t(g).responseIds[0] = 1.5)), "token_ids", "a fractional id");
  // JSON has no NaN: JSON.stringify sends a NaN as null, and 1e999 reads back as Infinity.
  assert.equal(refusedFor((g) => (t(g).logprobs[0] = NaN)), "logprobs", "NaN log-probs");
  const inf = JSON.stringify(good()).replace('"logprobs":[-0.5', '"logprobs":[1e999');
  assert.equal((send(enc(inf)) as { reason: string }).reason, "logprobs", "an infinite log-prob");
  assert.equal(refusedFor((g) => (t(g).reward = 1e9)), "reward", "a reward of 1e9");
  assert.equal(refusedFor((g) => (t(g).reward = null)), "reward", "no reward for a finished episode");
  assert.equal(refusedFor((g) => (g.version = 5)), "version", "a future version");
  assert.equal(refusedFor((g) => (t(g).version = 3)), "version", "an episode of another version");
  taken.add("1-0");
  try {
    assert.equal(refusedFor(() => {}), "duplicate", "a replayed message");
  } finally {
    taken.delete("1-0");
  }
  const big = good();
  big.trajectories[0].firstObservation = "x".repeat(5000);
  assert.equal((send(enc(big)) as { reason: string }).reason, "size", "past max_message_bytes");
});

Deno.test("a group under an id outside its sender's id space is refused: its worker's name and its bytes' SHA-256", () => {
  const bytes = enc(good());
  const reason = (id: string) => (send(bytes, SUBJECT, id) as { reason?: string }).reason;
  // What the attacker used: the prompt's id, which anyone who read the run id could predict.
  assert.equal(reason(prompt.id), "id");
  // Worker b's id space, on a's subject, with the right hash: a's message may not take b's place.
  assert.equal(reason(groupMessageId("b", bytes)), "id");
  assert.equal(reason(groupMessageId("a", enc({ ...good(), deliveries: 2 }))), "id", "another message's hash");
  assert.equal((admit({ data: bytes, subject: SUBJECT, id: undefined }, ctx) as { reason?: string }).reason, "id");
  assert.ok(send(bytes, SUBJECT, groupMessageId("a", bytes)).ok);
  // A forgery is named by what is wrong with it, whatever its id.
  const forged = enc({ ...good(), version: 5 });
  assert.equal((send(forged, SUBJECT, prompt.id) as { reason?: string }).reason, "version");
});

Deno.test("every other way a group can be wrong has its reason too", () => {
  const t = (g: GroupMessage) => g.trajectories[0];
  const cases: [string, (g: GroupMessage & Record<string, unknown>) => void, string?][] = [
    ["schema", (g) => (g.extra = 1)],
    ["schema", (g) => delete (g as Partial<GroupMessage>).seconds],
    ["schema", (g) => Object.assign(t(g), { weights: [1] })],
    ["schema", (g) => delete (t(g).turns[0] as { anchor?: string }).anchor],
    ["run", (g) => (g.run = "run-0")],
    ["worker", (g) => (g.worker = "b")],
    ["worker", (g) => (g.worker = "evil"), "crucible.trajectories.evil"],
    ["prompt", (g) => (g.group = 1)],
    ["prompt", (g) => (g.id = "run-1-s1-g0-r9")],
    ["prompt", (g) => g.trajectories.pop()],
    ["prompt", (g) => (t(g).seed = 99)],
    ["prompt", (g) => (t(g).task = 8)],
    ["lengths", (g) => t(g).promptIds.push(1, 1, 1, 1)],
    ["lengths", (g) => (t(g).responseIds.push(1, 1, 1), t(g).mask.push(1, 1, 1), t(g).logprobs.push(-1, -1, -1))],
    ["lengths", (g) => t(g).mask.pop()],
    ["lengths", (g) => t(g).logprobs.push(-1)],
    ["lengths", (g) => (t(g).rounds = 4)],
    ["masks", (g) => (t(g).mask[0] = 2)],
    ["logprobs", (g) => (t(g).logprobs[0] = 0.5)],
    ["logprobs", (g) => (t(g).logprobs[2] = -1)],
    ["reward", (g) => (t(g).reward = -0.5)],
  ];
  for (const [reason, edit, subject] of cases) {
    assert.equal(refusedFor(edit, subject), reason, `${edit}`);
  }
  assert.equal((send(enc("{not json")) as { reason: string }).reason, "unreadable");
  assert.equal((send(enc([1, 2])) as { reason: string }).reason, "schema");
  const named = new Set([
    ...cases.map((c) => c[0]),
    ...["unreadable", "token_ids", "version", "duplicate", "size", "id"],
  ]);
  assert.deepEqual([...named].sort(), [...REASONS].sort(), "every reason is shown to refuse something");
});
