/**
 * The WebShop task's conversation start, in Crucible's words of AgentGym's instructions (agentenv's WebshopAdapter,
 * ReAct form), and how a reply becomes an action as AgentGym's client reads it: a trailing `</s>` cut, then the text
 * after the last `Action:`; without one, the whole text when it holds `search[` or `click[`, else nothing.
 */
import type { Prompt } from "../../src/task/task.ts";

/** Instructions and acknowledgement. */
export const WEBSHOP_PROMPT: Prompt = {
  user: "You are shopping on the web and will be told what to buy. Each round you receive an observation and " +
    "the available actions, and answer with one action that follows the instruction. Use search when a search " +
    "bar is shown, or click one of the clickable values. An action is written as:\nsearch[keywords]\n" +
    "click[value]\nAn invalid action does nothing. Choose search keywords with care; a click value must be one " +
    "of the available actions.\nAnswer in this form:\n\nThought:\nI think ... \n\nAction: \nclick[something]",
  assistant: "Ok.",
};

/** The action in a reply, as AgentGym's WebShop client extracts it (`parse_react`), trimmed. */
export function webShopAction(text: string): string {
  // Upstream cuts five characters for the four of "</s>".
  const t = text.endsWith("</s>") ? text.slice(0, -5) : text;
  const cut = t.lastIndexOf("Action:");
  if (cut >= 0) return t.slice(cut + "Action:".length).trim();
  return t.includes("search[") || t.includes("click[") ? t.trim() : "";
}
