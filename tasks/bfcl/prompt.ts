/**
 * The BFCL task's conversation start, in Crucible's words: what the model does (call tools to carry out each user
 * request, then answer in plain text to end the turn), the call forms the server reads, and the fixed replies the
 * oracle's demonstrations end turns with.
 */
import type { Prompt } from "../../src/task/task.ts";

/** The oracle's plain reply that ends a turn after its calls. */
export const TURN_DONE_REPLY = "Done.";

/** The oracle's reply on a turn it cannot carry out (a function or a value is missing). */
export const EMPTY_TURN_REPLY = "I cannot do that yet: a function or a value I need is missing.";

/** Instructions and acknowledgement. */
export const BFCL_PROMPT: Prompt = {
  user: "You carry out a user's requests by calling functions. Each request comes as a message; the functions you " +
    "may call are listed as JSON documents before the first one.\n\n" +
    "To call functions, reply with nothing but the calls, as a list: [func_name(param=value, other=value), " +
    "func_name2(param=value)]. Values are Python literals: 'text', 3, 2.5, True, None, ['a', 'b'], {'k': 1}. " +
    '(The forms <tool_call>{"name": ..., "arguments": {...}}</tool_call> and one line per call, ' +
    'call: func_name param="value", are read too.) Each call\'s result comes back, one line per call; you may call ' +
    "again as often as the request needs.\n\n" +
    "When the request is done, or cannot be done because a function or a value is missing, reply in plain text " +
    "with no call: that ends your turn, and the next request follows.",
  assistant: "Understood. I will call the functions each request needs and reply in plain text when it is done.",
};
