/** SciWorld: carry out elementary-school science tasks in a text world. Success is a score of 100. */
import { sciworldAdapter } from "../src/env/adapters/sciworld.ts";
import { afterAction, type Task } from "../src/task/task.ts";

const ACTIONS: [string, string][] = [
  ["open/close OBJ", "open or close a container"],
  ["de/activate OBJ", "switch a device on or off"],
  ["connect OBJ to OBJ", "connect electrical parts"],
  ["disconnect OBJ", "disconnect electrical parts"],
  ["use OBJ [on OBJ]", "use a device or an item"],
  ["look around", "describe the room you are in"],
  ["look at OBJ", "describe an object closely"],
  ["look in OBJ", "describe what a container holds"],
  ["read OBJ", "read a note or a book"],
  ["move OBJ to OBJ", "put an object into a container"],
  ["pick up OBJ", "take an object into your inventory"],
  ["put down OBJ", "drop an item you carry"],
  ["pour OBJ into OBJ", "pour a liquid into a container"],
  ["dunk OBJ into OBJ", "dip a container into a liquid"],
  ["mix OBJ", "mix a container's contents chemically"],
  ["go to LOC", "move to another place"],
  ["eat OBJ", "eat some food"],
  ["flush OBJ", "flush a toilet"],
  ["focus on OBJ", "mark an object as the one the task is about"],
  ["wait", "do nothing for 10 steps"],
  ["wait1", "do nothing for 1 step"],
  ["task", "describe the current task"],
  ["inventory", "list what you carry"],
];

/** The SciWorld task. 30 rounds, as AgentGym's AgentEvol scripts run it. */
export const sciworld: Task = {
  name: "sciworld",
  adapter: sciworldAdapter,
  prompt: {
    user: "You act in a science world. Each round you receive an observation and answer with one action that moves " +
      "the task forward. The actions are:\n" + ACTIONS.map(([a, d]) => `- ${a}: ${d}`).join("\n") +
      "\nAnswer in this form:\nThought:\nyour thoughts.\n\nAction:\nyour next action",
    assistant: "OK. I will follow these instructions and do my best to complete the task.",
  },
  parseAction: (text) => ({ action: afterAction(text) }),
  isSuccess: (reward) => reward === 100,
  maxRounds: 30,
};
