/**
 * The BFCL oracle: an entry's demonstration replies from its ground truth, in the options' call form. Each turn
 * with ground truth gets one reply holding all its calls, then a plain reply that ends the turn; a turn without
 * ground truth gets the reply that it cannot be done.
 */
import { encodeCalls } from "./calls.ts";
import { parseGroundTruth } from "./checker.ts";
import type { BfclOptions } from "./options.ts";
import { EMPTY_TURN_REPLY, TURN_DONE_REPLY } from "./prompt.ts";
import type { BfclSource } from "./server.ts";

/** The oracle's replies for entry `index`: each turn's ground-truth calls in one reply, then the turn's end. */
export function oracleReplies(
  src: BfclSource,
  index: number,
  options: Pick<BfclOptions, "call_format">,
): string[] {
  const entry = src.entries[index];
  if (!entry) throw new RangeError(`No BFCL entry ${index}; the source has ${src.entries.length}`);
  const answer = (text: string) =>
    options.call_format === "envtuning" ? `<think>The request is handled.</think>\n<answer>${text}</answer>` : text;
  return entry.groundTruth.flatMap((turn, t) => {
    if (turn.length === 0) return [answer(EMPTY_TURN_REPLY)];
    const calls = turn.map((c) => parseGroundTruth(entry, t, c));
    return [encodeCalls(calls, options.call_format), answer(TURN_DONE_REPLY)];
  });
}
