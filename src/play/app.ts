/// <reference lib="dom" />
/**
 * The play page's script (bundled for the browser by `deno task play`): loads the agent from the play server
 * (onnxruntime-web's wasm build from /vendor/, the exported decoder and tokenizer from /model/), and plays
 * TextCraft through the embedded server's routes under /env/. The person acts by typing a move; the agent suggests
 * one or plays turn by turn. Every failure (a refused request, an error body, a model that will not load) is shown
 * in the page's status line and leaves the buttons usable. `document.body.dataset` carries `model` (loading, ready,
 * error) and `game` (idle, playing, solved, over, error) for tests.
 */
import { parseModelConfig } from "../model/config.ts";
import { stopTokenIds } from "../model/model_dir.ts";
import { Tokenizer } from "../model/tokenizer.ts";
import type { OrtModule } from "../onnx/runtime.ts";
import { OnnxSampler } from "../onnx/sampler.ts";
import { DEPTH_RANGES, depthOf, parseTextCraftAction } from "../../tasks/textcraft/rules.ts";
import { upstreamSuccess } from "../task/task.ts";
import { type AgentReply, PageAgent } from "./agent.ts";
import type { PlaySettings } from "./server.ts";
import { depthNote } from "./skill.ts";

// Held in a variable so the bundler leaves it to the browser: the play server serves onnxruntime-web's own build.
const ORT_URL = "/vendor/ort.wasm.bundle.min.mjs";

const $ = <T extends HTMLElement = HTMLElement>(id: string) => document.getElementById(id) as T;
const body = document.body.dataset;

interface Game {
  id: number;
  rounds: number;
  done: boolean;
}

let agent: PageAgent | undefined;
let settings: PlaySettings & { tasks: number; model: string };
let game: Game | undefined;
let envId: number | undefined;
let busy = false;
let stopRequested = false;

function status(text: string, kind: "" | "ok" | "bad" = ""): void {
  const el = $("status");
  el.textContent = text;
  el.className = kind;
}

function refresh(): void {
  const live = game !== undefined && !game.done;
  for (const id of ["action", "act"]) $<HTMLButtonElement>(id).disabled = busy || !live;
  $<HTMLButtonElement>("new").disabled = busy;
  $<HTMLButtonElement>("suggest").disabled = busy || !live || !agent;
  $<HTMLButtonElement>("autoplay").disabled = busy || !live || !agent;
  $<HTMLButtonElement>("stop").disabled = !busy;
}

async function getJson<T = Record<string, unknown>>(path: string): Promise<T> {
  const r = await fetch(path);
  if (!r.ok) throw new Error(`${path} answered ${r.status} ${r.statusText}`);
  return await r.json();
}

/** A TextCraft route; an error status or an `{"error"}` body is thrown with the server's own words. */
async function env(route: string, payload: unknown): Promise<Record<string, unknown>> {
  const r = await fetch(`/env${route}`, {
    method: "POST",
    headers: { "content-type": "application/json" },
    body: JSON.stringify(payload),
  });
  const data = await r.json().catch(() => ({}));
  if (!r.ok) {
    const detail = typeof data.detail === "string" ? data.detail : JSON.stringify(data.detail ?? data);
    throw new Error(`The server refused ${route} (${r.status}): ${detail}`);
  }
  if (typeof data.error === "string") throw new Error(`The server answered ${route} with an error: ${data.error}`);
  return data;
}

function logEntry(who: "you" | "agent" | "game", title: string, text: string): void {
  const div = document.createElement("div");
  div.className = `turn ${who}`;
  const head = document.createElement("div");
  head.className = "who";
  head.textContent = title;
  const pre = document.createElement("pre");
  pre.textContent = text;
  div.append(head, pre);
  $("log").append(div);
  div.scrollIntoView({ block: "nearest" });
}

async function loadAgent(): Promise<void> {
  body.model = "loading";
  settings = await getJson<typeof settings>("/play/settings");
  $("model-name").textContent = `agent: ${settings.model}`;
  $<HTMLInputElement>("task").max = String(settings.tasks - 1);
  const ranges = DEPTH_RANGES.map(([lo, hi], d) => `depth ${d + 1}: ${lo}-${hi}`).join(", ");
  $("task-range").textContent = `0 to ${settings.tasks - 1} (${ranges})`;
  showDepth();
  const [config, tok, tokConfig, generation] = await Promise.all(
    ["config.json", "tokenizer.json", "tokenizer_config.json", "generation_config.json"].map((f) =>
      getJson(`/model/${f}`)
    ),
  );
  const tokenizer = Tokenizer.fromJson(tok, tokConfig);
  const model = parseModelConfig(config, "/model/config.json");
  const mod = await import(ORT_URL);
  const ort = (mod.InferenceSession ? mod : mod.default) as OrtModule;
  ort.env.wasm.wasmPaths = "/vendor/";
  ort.env.wasm.numThreads = 1;
  const bytes = new Uint8Array(await (await fetch("/model/onnx/model.onnx")).arrayBuffer());
  const session = await ort.InferenceSession.create(bytes, { executionProviders: ["wasm"] });
  const sampler = new OnnxSampler(ort, session, model, { slots: 1, maxLen: settings.maxLen });
  agent = new PageAgent(sampler, tokenizer, {
    prompt: settings.prompt,
    maxTokensPerTurn: settings.maxTokensPerTurn,
    temperature: settings.temperature,
    stopIds: stopTokenIds({ config: model, generationConfig: generation, tokenizer }),
  });
  body.model = "ready";
  $("model-status").textContent = "agent ready";
}

/** The note on the chosen task's depth against what the agent's evaluation shows it can plan. */
function showDepth(): void {
  const index = Number($<HTMLInputElement>("task").value.trim());
  const note = Number.isInteger(index) && settings ? depthNote(depthOf(index), settings.skill) : undefined;
  $("depth-note").textContent = note?.text ?? "";
  $("depth-note").className = note?.warn ? "warn" : "";
  body.depthWarning = note?.warn ? "yes" : "no";
}

async function newGame(): Promise<void> {
  const text = $<HTMLInputElement>("task").value.trim();
  const index = Number(text);
  if (text === "" || !Number.isInteger(index)) throw new Error(`The task must be a whole number, got "${text}"`);
  game = undefined;
  $("log").replaceChildren();
  $("agent-reply").textContent = "";
  envId ??= (await env("/create", {})).id as number;
  const first = await env("/reset", { id: envId, data_idx: index });
  game = { id: envId, rounds: 0, done: false };
  logEntry("game", `task ${index}`, String(first.observation));
  agent?.start(String(first.observation));
  body.game = "playing";
  status(`Task ${index}: your move, or the agent's.`);
}

/** Plays one turn with reply `text`; returns whether the game goes on. */
async function play(text: string, who: "you" | "agent"): Promise<boolean> {
  const g = game!;
  const parsed = parseTextCraftAction(text);
  const result = "reply" in parsed ? parsed.reply : await env("/step", { id: g.id, action: parsed.action });
  const observation = String(result.observation);
  g.rounds++;
  logEntry(who, who === "you" ? "you" : "agent", who === "agent" ? text : ("action" in parsed ? parsed.action : text));
  logEntry("game", "game", observation);
  agent?.record(text, observation);
  if (result.done) {
    g.done = true;
    const solved = upstreamSuccess(Number(result.reward));
    body.game = solved ? "solved" : "over";
    status(solved ? `Solved in ${g.rounds} turns.` : "Game over.", solved ? "ok" : "bad");
    return false;
  }
  if (g.rounds >= settings.maxRounds) {
    g.done = true;
    body.game = "over";
    status(`Out of turns (${settings.maxRounds}).`, "bad");
    return false;
  }
  return true;
}

async function suggest(): Promise<AgentReply> {
  $("model-status").textContent = "the agent is thinking…";
  const reply = await agent!.reply();
  $("model-status").textContent = "agent ready";
  $("agent-reply").textContent = reply.text;
  return reply;
}

let lastSuggestion: AgentReply | undefined;

/** Runs an action with the buttons disabled; any error is shown in the page. */
async function guarded(fn: () => Promise<void>): Promise<void> {
  busy = true;
  refresh();
  try {
    await fn();
  } catch (e) {
    body.game = "error";
    status(e instanceof Error ? e.message : String(e), "bad");
  } finally {
    busy = false;
    stopRequested = false;
    refresh();
  }
}

$("new").addEventListener("click", () => guarded(newGame));
$("task").addEventListener("input", showDepth);
$("act").addEventListener("click", () =>
  guarded(async () => {
    const move = $<HTMLInputElement>("action").value.trim();
    if (move === "") return;
    const s = lastSuggestion;
    lastSuggestion = undefined;
    const parsed = s && parseTextCraftAction(s.text);
    // Taking the agent's suggestion as it stands keeps its own reply in its conversation.
    const text = parsed && "action" in parsed && parsed.action === move ? s!.text : `Action: ${move}`;
    $<HTMLInputElement>("action").value = "";
    await play(text, "you");
  }));
$("action").addEventListener("keydown", (e) => {
  if ((e as KeyboardEvent).key === "Enter") $("act").click();
});
$("suggest").addEventListener("click", () =>
  guarded(async () => {
    lastSuggestion = await suggest();
    const parsed = parseTextCraftAction(lastSuggestion.text);
    $<HTMLInputElement>("action").value = "action" in parsed ? parsed.action : "";
  }));
$("autoplay").addEventListener("click", () =>
  guarded(async () => {
    lastSuggestion = undefined;
    while (!stopRequested && (await play((await suggest()).text, "agent"))) {
      await new Promise((resolve) => setTimeout(resolve, 0)); // let the page draw the turn
    }
  }));
$("stop").addEventListener("click", () => (stopRequested = true));

body.game = "idle";
refresh();
loadAgent().then(refresh, (e) => {
  body.model = "error";
  $("model-status").textContent = "the agent could not be loaded";
  status(`The agent could not be loaded: ${e instanceof Error ? e.message : e}`, "bad");
});
