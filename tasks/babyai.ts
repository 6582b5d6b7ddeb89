/** BabyAI: reach a goal in a grid world of rooms and doors. */
import { babyaiAdapter } from "../src/env/adapters/babyai.ts";
import { afterAction, type Task, upstreamSuccess } from "../src/task/task.ts";

/** The BabyAI task. 20 rounds is Crucible's default (the spec records none). */
export const babyai: Task = {
  name: "babyai",
  adapter: babyaiAdapter,
  prompt: {
    user: "You are an explorer who means to reach every goal you are set. You stand in a room and must achieve the " +
      "goal through actions. Each round you receive an observation and answer with your thought and one action.\n\n" +
      "The actions are:\n\n- turn right\n\n- turn left\n\n- move forward\n\n- go to <obj> <id>\n\n" +
      "- pick up <obj> <id>\n\n- go through <door> <id>: the door must be open.\n\n" +
      "- toggle and go through <door> <id>: the door may be closed or locked; a locked door opens only while you " +
      "carry a key of its colour.\n\n- toggle: open the closed or locked door right in front of you.\n" +
      "Answer in this form:\nThought:\n<your thought>\n\nAction:\n<your action>",
    assistant: "OK. I will follow these instructions and do my best to complete the task.",
  },
  parseAction: (text) => ({ action: afterAction(text) }),
  isSuccess: upstreamSuccess,
  maxRounds: 20,
};
