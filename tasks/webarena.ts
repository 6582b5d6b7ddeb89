/** WebArena: complete tasks on self-hosted websites through a browser. The server parses the text. */
import { webarenaAdapter } from "../src/env/adapters/webarena.ts";
import { type Task, upstreamSuccess } from "../src/task/task.ts";

/** The WebArena task. 15 rounds is Crucible's default (the spec records none). */
export const webarena: Task = {
  name: "webarena",
  adapter: webarenaAdapter,
  prompt: {
    user: "You are an autonomous agent driving a web browser to complete a task. Each turn you see the objective, " +
      "the page's accessibility tree, its URL, the open tabs and your previous action.\n\nActions:\n" +
      "`click [id]`, `type [id] [content] [press_enter_after=0|1]` (Enter is pressed unless 0), `hover [id]`, " +
      "`press [key_comb]`, `scroll [direction=down|up]`; `new_tab`, `tab_focus [tab_index]`, `close_tab`; " +
      "`goto [url]`, `go_back`, `go_forward`; and `stop [answer]` when done (answer N/A if the task is " +
      "impossible).\n\nThe homepage http://homepage.com lists the sites; http://homepage.com/password.html lists " +
      'their accounts.\n\nRules: issue one valid action at a time; reason step by step; end with "In summary, the ' +
      'next action I will perform is" followed by the action inside ``````, e.g. ```click [1234]```; say nothing ' +
      "after stop.",
    assistant: "Ok.",
  },
  parseAction: (text) => ({ action: text }),
  isSuccess: upstreamSuccess,
  maxRounds: 15,
};
