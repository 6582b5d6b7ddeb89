/** ALFWorld: household tasks in a text world; each observation lists the admissible actions. */
import { alfworldAdapter } from "../src/env/adapters/alfworld.ts";
import { type Task, upstreamSuccess } from "../src/task/task.ts";

/** The text after the last `Action:` (or the whole text), trimmed. */
export function lastAction(text: string): string {
  const cut = text.lastIndexOf("Action:");
  return (cut < 0 ? text : text.slice(cut + "Action:".length)).trim();
}

/** The ALFWorld task. 30 rounds, as AgentGym's AgentEvol scripts run it. */
export const alfworld: Task = {
  name: "alfworld",
  adapter: alfworldAdapter,
  prompt: {
    user: "Solve a task in a household. You are an agent in a home, and you first receive a description of your " +
      "surroundings and the goal. Each turn you are shown the actions available and pick one. You may think " +
      'first, answering exactly as "Thought:\\nyour thoughts.\\n\\nAction:\\nyour next action", or act at once, ' +
      'answering exactly as "Action:\\nyour next action". The environment answers every turn; "Nothing happened" ' +
      "means the action was not valid and you should try something else.\n" +
      "Remember:\n1. Choose only among the available actions; anything else is not allowed.\n" +
      "2. Think only when it helps; prefer acting directly.",
    assistant: "OK. I will follow these instructions and do my best to complete the task.",
  },
  parseAction: (text) => ({ action: lastAction(text) }),
  isSuccess: upstreamSuccess,
  maxRounds: 30,
};
