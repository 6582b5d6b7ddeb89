/**
 * SearchQA: answer a question, searching a corpus on the way. The server itself finds the first
 * `<search>` or `<answer>` in the raw text, so the text is sent as it is. Items 0-51712 test, 51713-221327 train.
 */
import { searchqaAdapter } from "../src/env/adapters/searchqa.ts";
import { ranges } from "../src/task/splits.ts";
import { type Task, upstreamSuccess } from "../src/task/task.ts";

/** SearchQA item ranges. */
export const SEARCHQA_SPLITS = { test: ranges([0, 51712]), train: ranges([51713, 221327]) };

/** The SearchQA task. 5 rounds is Crucible's default (the spec records none). */
export const searchqa: Task = {
  name: "searchqa",
  adapter: searchqaAdapter,
  prompt: {
    user: "Answer the question the environment gives you. Reason first. To look something up, write " +
      "<search>your query</search> and the results come back between <information> and </information>. Search as " +
      "often as you need. When you know the answer, write it as <answer>your answer</answer>, without explanation.",
    assistant: "Ok.",
  },
  parseAction: (text) => ({ action: text }),
  isSuccess: upstreamSuccess,
  maxRounds: 5,
};
