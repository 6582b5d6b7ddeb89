/** WebShop: find and buy the product an instruction describes. */
import { webshopAdapter } from "../src/env/adapters/webshop.ts";
import { lastAction } from "./alfworld.ts";
import { type Task, upstreamSuccess } from "../src/task/task.ts";

/** The WebShop task. 6 rounds, as AgentGym's AgentEvol scripts run it. */
export const webshop: Task = {
  name: "webshop",
  adapter: webshopAdapter,
  prompt: {
    user: "You are shopping on the web and will be told what to buy. Each round you receive an observation and " +
      "the available actions, and answer with one action that follows the instruction. Use search when a search " +
      "bar is shown, or click one of the clickable values. An action is written as:\nsearch[keywords]\n" +
      "click[value]\nAn invalid action does nothing. Choose search keywords with care; a click value must be one " +
      "of the available actions.\nAnswer in this form:\n\nThought:\nI think ... \n\nAction: \nclick[something]",
    assistant: "Ok.",
  },
  parseAction: (text) => ({ action: lastAction(text) }),
  isSuccess: upstreamSuccess,
  maxRounds: 6,
};
