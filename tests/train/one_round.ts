/** A one-round environment for the RL toy tests: TextCraft's protocol, a fixed prompt, a reward per reply. */
import { textcraftAdapter } from "../../src/env/adapters/textcraft.ts";
import type { Task } from "../../src/task/task.ts";
import { fakeServer } from "../env/helpers.ts";

/** A server whose episode is one step: `prompt`, then the reply's reward and the episode's end. */
export function oneRoundServer(prompt: string, reward: (action: string) => number, says = (_r: number) => "ok") {
  return fakeServer((path, body) => {
    const b = body as { action?: string };
    if (path === "/create") return Response.json({ id: 0, observation: prompt, done: false, reward: 0 });
    if (path === "/reset") return Response.json({ id: 0, observation: prompt });
    if (path === "/step") {
      const r = reward((b.action ?? "").trim());
      return Response.json({ observation: says(r), reward: r, done: true });
    }
    return Response.json(true);
  });
}

/** The task of {@linkcode oneRoundServer}: the reply is the action, success is reward 1. */
export function oneRoundTask(name: string, prompt: string): Task {
  return {
    name,
    adapter: textcraftAdapter,
    prompt: { user: prompt, assistant: "OK." },
    parseAction: (text) => ({ action: text }),
    isSuccess: (r) => r === 1,
    maxRounds: 1,
  };
}
