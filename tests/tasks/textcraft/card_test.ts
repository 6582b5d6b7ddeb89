// TextCraft's words on a base model's card (tasks/textcraft/card.ts, the Task hook baseModelWords): the recipe's
// numbers and, only when the recipe has recovery data, its sentence; the task registry hands them out.
import assert from "node:assert/strict";
import { getTask } from "../../../tasks/mod.ts";
import { textCraftCardWords } from "../../../tasks/textcraft/card.ts";

const pretrain = { seed: 7, copy_share: 0.5, eval_seed: 99 };

Deno.test("TextCraft's card words carry the recipe's seeds and copy share, and recovery data only when asked", () => {
  const plain = textCraftCardWords({ pretrain, taskOptions: {} });
  assert.match(plain.data, /^Every batch is generated on the fly from \(seed 7, step\)/);
  assert.match(plain.data, /copy strings of item names \(0\.5 at the start\)/);
  assert.match(plain.data, /Held-out worlds come from\nseed 99, which training never draws from\.$/);
  assert.doesNotMatch(plain.data, /Recovery data/);
  assert.equal(textCraftCardWords({ pretrain, taskOptions: { synthetic_misreads: 0 } }).data, plain.data);
  const misreads = textCraftCardWords({ pretrain, taskOptions: { synthetic_misreads: 0.3 } });
  assert.match(misreads.data, /mixed in\. Recovery data: before each turn, a 30% chance of a misread reply/);
  assert.doesNotMatch(misreads.data, /skipped push/);
  const skips = textCraftCardWords({
    pretrain,
    taskOptions: { synthetic_misreads: 0.1, synthetic_skipped_pushes: 0.3 },
  });
  assert.match(
    skips.data,
    /a 10% chance of a misread reply .* followed by the right one\. Before each turn that pushes/,
  );
  assert.match(skips.data, /a 30% chance of a skipped push: the thought ends before that frame/);
  assert.equal(plain.trainedOn, "synthetic crafting worlds only.");
});

Deno.test("the card's words come from the task: TextCraft has its own, a task without the hook has none", () => {
  assert.equal(getTask("textcraft").baseModelWords?.({ pretrain, taskOptions: {} }).names, "item names");
  assert.equal(getTask("bfcl").baseModelWords, undefined);
});
