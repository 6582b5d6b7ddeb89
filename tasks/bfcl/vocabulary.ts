/**
 * Everything the BFCL task says and accepts as text, for the built-in tiny model's word-level vocabulary: the
 * prompt, each generated entry's opening and questions, its ground truth written in every call form with the
 * results it gets back (but for long-context entries, whose results are BFCL's filler: its thousands of made-up
 * ticker symbols, city names and manual text would multiply the vocabulary about fivefold, 1.9 k -> 8.7 k tokens, for
 * words a model only has to read past, as [UNK]), and the fixed replies; function and parameter names kept as single
 * tokens.
 */
import type { Prompt, TaskVocabulary } from "../../src/task/task.ts";
import { newInstance } from "./classes/api.ts";
import { CALL_FORMATS, encodeCalls } from "./calls.ts";
import { parseGroundTruth } from "./checker.ts";
import { ADDITIONAL_FUNCTION_SENTENCE, toolList } from "./episode.ts";
import { executeCall, newInstances } from "./execute.ts";
import { EMPTY_TURN_REPLY, TURN_DONE_REPLY } from "./prompt.ts";
import type { BfclSource } from "./server.ts";

/** The vocabulary over `source`'s entries (the generated ones: never BFCL's held-out files). */
export function bfclVocabulary(source: BfclSource, prompt: Prompt): TaskVocabulary {
  const corpus = [prompt.user, prompt.assistant, TURN_DONE_REPLY, EMPTY_TURN_REPLY, ADDITIONAL_FUNCTION_SENTENCE];
  const names = new Set<string>();
  for (const docs of Object.values(source.docs)) {
    corpus.push(toolList(docs));
    for (const d of docs) {
      names.add(d.name);
      Object.keys(d.parameters.properties).forEach((p) => names.add(p));
    }
  }
  for (const entry of source.entries) {
    const inst = newInstances(entry, newInstance);
    entry.question.forEach((turn, t) => {
      for (const m of turn) corpus.push(m.content);
      const calls = entry.groundTruth[t].map((c) => parseGroundTruth(entry, t, c));
      for (const f of CALL_FORMATS) if (f !== "auto" && calls.length) corpus.push(encodeCalls(calls, f));
      for (const c of calls) {
        const result = executeCall(inst, c);
        if (!entry.longContext) corpus.push(result);
      }
    });
  }
  return { corpus, phrases: [...names] };
}
