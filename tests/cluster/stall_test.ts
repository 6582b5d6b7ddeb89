// What a learner waiting for groups says (src/cluster/stall.ts): the workers it heard from and the queue, and from them
// why nothing more arrives. The stalls each get their reason, not "is a worker running?" alone. No server.
import assert from "node:assert/strict";
import { type StallFacts, stallNote } from "../../src/cluster/stall.ts";

const base: StallFacts = {
  step: 1,
  have: 0,
  want: 2,
  seconds: 120,
  url: "nats://127.0.0.1:4222",
  workers: [],
  refused: 0,
  duplicates: 0,
};

Deno.test("every worker dropped: named, with its refusals, and what to do", () => {
  const note = stallNote({
    ...base,
    queue: { pending: 2, playing: 0 },
    refused: 10,
    workers: [{ name: "b", groups: 0, refused: { schema: 10 }, dropped: true }],
  });
  assert.equal(
    note,
    "Step 1: 0 of 2 groups in after 120 s. Workers: b dropped, 10 messages refused (schema: 10). Queue: 2 " +
      "prompts waiting, no prompts held by workers. Every worker the learner heard from was dropped for its " +
      "refused messages; start one: deno task worker --cluster nats://127.0.0.1:4222",
  );
});

Deno.test("prompts waiting and no worker taking them; prompts held and not played; the queue empty", () => {
  assert.match(stallNote({ ...base, queue: { pending: 2, playing: 0 } }), /No worker is taking prompts: is one/);
  const held = stallNote({
    ...base,
    have: 1,
    queue: { pending: 0, playing: 1 },
    workers: [{ name: "a", groups: 4, lastSeconds: 95, refused: {}, dropped: false }],
  });
  assert.match(held, /Workers: a sent 4 groups, the last 95 s ago\. Queue: no prompts waiting, 1 prompt held/);
  assert.match(held, /Workers hold prompts without publishing their groups: slow, or stalled/);
  // The silenced worker: its groups acknowledged and dropped as duplicates, the queue empty.
  const silenced = stallNote({ ...base, queue: { pending: 0, playing: 0 }, duplicates: 2, refused: 6 });
  assert.match(silenced, /The queue holds no prompt: .* no group the learner could take came back \(6 messages/);
  assert.match(silenced, /refused \(metrics\.jsonl rejected_REASON\), 2 duplicates dropped\)/);
  // The version key overwritten: said, and put back.
  const key = stallNote({ ...base, queue: { pending: 2, playing: 0 }, versionKey: 'it held {"type":"io.nats"' });
  assert.match(key, /The version key did not hold the learner's version \(it held \{"type":"io\.nats"\); put back\./);
  // No answer from the server about the queue: the old question, with the command.
  assert.match(stallNote(base), /Is a worker running\? start one: deno task worker --cluster nats:/);
});
