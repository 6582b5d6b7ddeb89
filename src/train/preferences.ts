/**
 * Preference pairs as text, in and out: TRL's conversational preference format (`prompt`, `chosen`, `rejected` as
 * lists of {role, content} messages) and AgentGym's (`id`, `prompt`, `chosen`, `rejected` as {from, value, loss}
 * turns, what make_dpo_dataset.py writes), a JSON array or JSONL either way. A pair's prompt opens with the task's
 * instructions, the assistant's acknowledgement and the first observation (a system message first is folded into the
 * instructions); further prompt turns are shared context. Each side then alternates the agent's turns (trained unless
 * `loss` is false) and the environment's replies. Pairs become training sequences in the exact token layout RL and
 * SFT train on (src/train/sft_data.ts's rendering).
 */
import type { Tokenizer } from "../model/tokenizer.ts";
import { ChatRenderer, type Opening } from "../rollout/chat.ts";
import type { Trajectory } from "../rollout/trajectory.ts";
import type { PreferencePair } from "../update/dpo_update.ts";
import type { TrainSequence } from "../update/sequences.ts";

/** One turn after the opening: the agent's (trained unless `loss` is false) or the environment's. */
export interface PairTurn {
  role: "assistant" | "user";
  content: string;
  /** The agent's turns train unless false; the environment's never do. */
  loss?: boolean;
}

/** A preference pair as text: one opening, and each side's turns after it. */
export interface TextPair {
  /** The task's index (AgentGym's `id`), where known. */
  id?: number;
  opening: Opening;
  /** Turns after the opening that both sides share (prompts longer than the opening); usually none. */
  context?: PairTurn[];
  chosen: PairTurn[];
  rejected: PairTurn[];
}

/** The two formats pairs are written in. */
export const PREFERENCE_FORMATS = ["trl", "agentgym"] as const;

/** One of {@linkcode PREFERENCE_FORMATS}. */
export type PreferenceFormat = typeof PREFERENCE_FORMATS[number];

/** A malformed entry: the file, the line and the field, and what was expected there. */
function bad(source: string, line: number, field: string, want: string): SyntaxError {
  return new SyntaxError(`${source} line ${line}: field "${field}" ${want}`);
}

/** The line each top-level element of a JSON array starts on (strings and nesting skipped). */
function arrayLines(text: string): number[] {
  const out: number[] = [];
  let line = 1, depth = 0, inString = false, escaped = false, expecting = false;
  for (const ch of text) {
    if (ch === "\n") line++;
    if (inString) {
      if (escaped) escaped = false;
      else if (ch === "\\") escaped = true;
      else if (ch === '"') inString = false;
      continue;
    }
    if (expecting && !/\s/.test(ch) && ch !== "]") (out.push(line), expecting = false);
    if (ch === '"') inString = true;
    else if (ch === "[" || ch === "{") {
      depth++;
      if (depth === 1) expecting = true;
    } else if (ch === "]" || ch === "}") depth--;
    else if (ch === "," && depth === 1) expecting = true;
  }
  return out;
}

/** The entries of a JSON array or JSONL text, each with the line it starts on. */
function entries(text: string, source: string): { value: unknown; line: number }[] {
  const trimmed = text.trim();
  if (trimmed === "") throw new SyntaxError(`${source} line 1: the file is empty; it needs at least one pair`);
  if (trimmed.startsWith("[")) {
    let values: unknown[];
    try {
      values = JSON.parse(trimmed);
    } catch (e) {
      throw new SyntaxError(`${source}: not a JSON array (${(e as Error).message})`);
    }
    const lines = arrayLines(text);
    return values.map((value, i) => ({ value, line: lines[i] ?? 1 }));
  }
  const out: { value: unknown; line: number }[] = [];
  text.split("\n").forEach((row, i) => {
    if (!row.trim()) return;
    try {
      out.push({ value: JSON.parse(row), line: i + 1 });
    } catch (e) {
      throw new SyntaxError(`${source} line ${i + 1}: not JSON (${(e as Error).message})`);
    }
  });
  return out;
}

type Role = "system" | "user" | "assistant";

/** A list of turns in either format, as roles and texts; `field` names it in errors. */
function turns(v: unknown, at: { source: string; line: number; field: string }): PairTurn[] & { system?: string } {
  if (!Array.isArray(v) || v.length === 0) throw bad(at.source, at.line, at.field, "must be a non-empty list of turns");
  let system: string | undefined;
  const out: PairTurn[] & { system?: string } = [];
  v.forEach((t, i) => {
    const f = `${at.field}[${i}]`;
    if (t === null || typeof t !== "object") throw bad(at.source, at.line, f, "must be an object");
    const o = t as Record<string, unknown>;
    const agentGym = "from" in o;
    const text = agentGym ? o.value : o.content;
    const who = agentGym ? o.from : o.role;
    if (typeof text !== "string") {
      throw bad(at.source, at.line, `${f}.${agentGym ? "value" : "content"}`, "must be a string");
    }
    const role: Role | undefined = who === "human" || who === "user"
      ? "user"
      : who === "gpt" || who === "assistant"
      ? "assistant"
      : who === "system"
      ? "system"
      : undefined;
    if (!role) {
      throw bad(
        at.source,
        at.line,
        `${f}.${agentGym ? "from" : "role"}`,
        `is ${JSON.stringify(who)}; expected ${agentGym ? "human or gpt" : "user or assistant"}`,
      );
    }
    if (role === "system") {
      if (i !== 0 || at.field === "chosen" || at.field === "rejected") {
        throw bad(at.source, at.line, f, "is a system message; only the first turn of a prompt may be");
      }
      system = text;
      return;
    }
    const loss = o.loss;
    if (loss !== undefined && loss !== null && typeof loss !== "boolean") {
      throw bad(at.source, at.line, `${f}.loss`, "must be true, false or null");
    }
    out.push(role === "assistant" ? { role, content: text, loss: loss !== false } : { role, content: text });
  });
  if (system !== undefined) out.system = system;
  return out;
}

/** Checks that turns alternate from `first`. */
function alternate(ts: PairTurn[], first: PairTurn["role"], at: { source: string; line: number; field: string }) {
  ts.forEach((t, i) => {
    const want = (i % 2 === 0) === (first === "assistant") ? "assistant" : "user";
    if (t.role !== want) {
      throw bad(at.source, at.line, `${at.field}[${i}]`, `is a ${t.role} turn where a ${want} turn belongs`);
    }
  });
}

/**
 * Reads preference pairs from a file's text, TRL's or AgentGym's format (per entry); a malformed entry is a
 * SyntaxError naming `source`, the entry's line and the field.
 */
export function parsePreferences(text: string, source: string): TextPair[] {
  const all = entries(text, source);
  if (all.length === 0) throw new SyntaxError(`${source} line 1: holds no pair; DPO needs at least one`);
  return all.map(({ value, line }) => {
    if (value === null || typeof value !== "object" || Array.isArray(value)) {
      throw bad(source, line, "(entry)", "must be an object with prompt, chosen and rejected");
    }
    const e = value as Record<string, unknown>;
    const at = (field: string) => ({ source, line, field });
    const prompt = turns(e.prompt, at("prompt"));
    alternate(prompt, "user", at("prompt"));
    if (prompt.length < 3 || prompt.length % 2 === 0) {
      throw bad(
        source,
        line,
        "prompt",
        "must open with instructions, acknowledgement and first observation " +
          `(user, assistant, user turns; an odd count), got ${prompt.length} turns`,
      );
    }
    const [user, assistant, observation] = prompt;
    const opening = {
      user: prompt.system === undefined ? user.content : `${prompt.system}\n\n${user.content}`,
      assistant: assistant.content,
      observation: observation.content,
    };
    const sides = (["chosen", "rejected"] as const).map((k) => {
      const ts = turns(e[k], at(k));
      alternate(ts, "assistant", at(k));
      return ts.map(({ role, content, loss }) => (role === "assistant" ? { role, content, loss } : { role, content }));
    });
    const id = typeof e.id === "number"
      ? e.id
      : typeof e.id === "string" && /^\d+$/.test(e.id)
      ? Number(e.id)
      : undefined;
    const context = prompt.slice(3).map((t) => (t.role === "assistant" ? { ...t, loss: false } : t));
    return {
      ...(id === undefined ? {} : { id }),
      opening,
      ...(context.length > 0 ? { context } : {}),
      chosen: sides[0],
      rejected: sides[1],
    };
  });
}

/** An expert's episode of one task, as text: its opening, its turns after it and its reward. */
export interface ExpertEpisode {
  opening: Opening;
  turns: PairTurn[];
  reward: number;
}

/**
 * Reads expert trajectories as AgentGym writes them (`item_id` "<task>_<index>", `conversations` of from/value turns,
 * `reward`, 1 when absent), a JSON array or JSONL, by task index. Of two episodes of one task the lower-rewarded is
 * kept, as make_dpo_dataset.py does. A malformed entry is a SyntaxError naming `source`, the line and the field.
 */
export function parseExperts(text: string, source: string, task: string): Map<number, ExpertEpisode> {
  const out = new Map<number, ExpertEpisode>();
  for (const { value, line } of entries(text, source)) {
    if (value === null || typeof value !== "object" || Array.isArray(value)) {
      throw bad(source, line, "(entry)", "must be an object with item_id and conversations");
    }
    const e = value as Record<string, unknown>;
    const id = typeof e.item_id === "string" ? e.item_id : "";
    const cut = id.lastIndexOf("_");
    if (cut < 0 || id.slice(0, cut) !== task || !/^\d+$/.test(id.slice(cut + 1))) {
      throw bad(source, line, "item_id", `is ${JSON.stringify(e.item_id)}; expected "${task}_<index>"`);
    }
    const reward = e.reward ?? 1;
    if (typeof reward !== "number" || !Number.isFinite(reward)) throw bad(source, line, "reward", "must be a number");
    const at = { source, line, field: "conversations" };
    const ts = turns(e.conversations, at);
    alternate(ts, "user", at);
    if (ts.length < 4) {
      throw bad(
        source,
        line,
        "conversations",
        "must open with instructions, acknowledgement and first observation, " +
          `then the agent's turns; got ${ts.length} turns`,
      );
    }
    const opening = {
      user: ts.system === undefined ? ts[0].content : `${ts.system}\n\n${ts[0].content}`,
      assistant: ts[1].content,
      observation: ts[2].content,
    };
    const index = Number(id.slice(cut + 1)), kept = out.get(index);
    if (!kept || reward < kept.reward) out.set(index, { opening, turns: ts.slice(3), reward });
  }
  return out;
}

/** Reads a preference file whole (before anything is written): the pairs, or a SyntaxError naming line and field. */
export async function readPreferences(path: string): Promise<TextPair[]> {
  return parsePreferences(await Deno.readTextFile(path), path);
}

/** The pairs as JSONL in one of the two formats (one pair a line). */
export function formatPreferences(pairs: readonly TextPair[], format: PreferenceFormat): string {
  const lines = pairs.map((p) => {
    const o = p.opening;
    const prompt: PairTurn[] = [
      { role: "user", content: o.user },
      { role: "assistant", content: o.assistant, loss: false },
      { role: "user", content: o.observation },
      ...(p.context ?? []),
    ];
    if (format === "trl") {
      const msgs = (ts: PairTurn[]) => ts.map((t) => ({ role: t.role, content: t.content }));
      return JSON.stringify({ prompt: msgs(prompt), chosen: msgs(p.chosen), rejected: msgs(p.rejected) });
    }
    const conv = (ts: PairTurn[]) =>
      ts.map((t) => ({
        from: t.role === "assistant" ? "gpt" : "human",
        value: t.content,
        loss: t.role === "assistant" && t.loss !== false,
      }));
    return JSON.stringify({
      ...(p.id === undefined ? {} : { id: p.id }),
      prompt: conv(prompt),
      chosen: conv(p.chosen),
      rejected: conv(p.rejected),
    });
  });
  return lines.map((l) => l + "\n").join("");
}

/** An episode's turns after its opening, as text: each reply, then the observation after it (none after the last). */
export function episodeTurns(t: Trajectory): PairTurn[] {
  return t.turns.flatMap((x, k) => [
    { role: "assistant" as const, content: x.text, loss: true },
    ...(k < t.turns.length - 1 ? [{ role: "user" as const, content: x.observation }] : []),
  ]);
}

/** Renders turns after a prompt: replies with the stop id (mask 1 where trained), observation chunks (mask 0). */
export function renderTurns(
  chat: ChatRenderer,
  prompt: number[],
  ts: readonly PairTurn[],
  stopId: number,
): TrainSequence {
  const ids = [...prompt], mask: number[] = [];
  for (const t of ts) {
    const piece = t.role === "assistant"
      ? [...chat.tokenizer.encode(t.content), stopId]
      : chat.observation(t.content, stopId);
    ids.push(...piece);
    mask.push(...piece.map(() => (t.role === "assistant" && t.loss !== false ? 1 : 0)));
  }
  return { ids, promptLength: prompt.length, mask };
}

/** A text pair as training sequences over one rendered prompt (its shared context is mask 0 on both sides). */
export function pairSequences(
  pair: TextPair,
  o: { tokenizer: Tokenizer; stopId: number; chat?: ChatRenderer },
): PreferencePair {
  const chat = o.chat ?? new ChatRenderer(o.tokenizer);
  const prompt = chat.prompt(pair.opening), context = pair.context ?? [];
  const side = (ts: PairTurn[]) => renderTurns(chat, prompt, [...context, ...ts], o.stopId);
  return { chosen: side(pair.chosen), rejected: side(pair.rejected) };
}
