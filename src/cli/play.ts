/**
 * `deno task play [--model DIR] [--port N]`: serves the play page (src/play/), where a person plays TextCraft and
 * the model's agent, running in the browser through onnxruntime-web, suggests actions or plays the task itself.
 */
import { loadForExport } from "../onnx/export.ts";
import { type PlaySettings, servePlay } from "../play/server.ts";
import { readDepthSkill } from "../play/skill.ts";
import { readAgentSettings } from "../train/agent_settings.ts";
import { textcraft } from "../../tasks/textcraft/mod.ts";
import { embeddedTextCraft } from "../../tasks/textcraft/game/server.ts";
import { dryRun, numberFlag, parseFlags } from "../command/args.ts";
import { localModel } from "../command/model_arg.ts";

const USAGE = `Usage: deno task play [--model DIR] [--port N] [--host NAME]

Serves a page where you play a TextCraft task while the model's agent runs in your browser (onnxruntime-web, wasm):
it suggests your next action, or plays the task itself turn by turn. Everything the page loads comes from this
server. A checkpoint's crucible.json gives the agent's prompt, limits and temperature, as in deno task eval. The
page warns when a task is deeper than the agent's latest evaluation shows it can plan (its run's evals.jsonl, or
the model card's results by depth).

Tasks: TextCraft only. The page embeds TextCraft's own game (served by this command from its crafting tree) and
knows its moves (get, craft ... using ..., inventory) and its depths; BFCL and WebShop have no page yet (their servers
answer AgentGym's HTTP routes: deno task serve bfcl|webshop), and AgentGym's other environments run only on their
upstream servers, which the page cannot embed. A model trained on another task is refused, naming it.

Options:
  --model DIR   the agent: a Crucible checkpoint or a Hugging Face directory (default models/crucible-tiny)
  --port N      port to listen on; 0 picks a free one (default 8000)
  --host NAME   interface to bind (default 127.0.0.1)
  --allowed-host NAME  a name the page may be opened by (its Host), beyond the loopback names and
                --host (bound to 0.0.0.0: this machine's name and addresses); repeatable
  -h, --help    this text

Examples:
  deno task play
  deno task play --model runs/smoke/checkpoints/final --port 8080   # runs/smoke: deno task train --help`;

/** Runs the command until interrupted. */
export async function main(args: string[]): Promise<void> {
  const { values: v } = parseFlags("deno task play", {
    args,
    options: {
      model: { type: "string", default: "models/crucible-tiny" },
      port: { type: "string" },
      host: { type: "string", default: "127.0.0.1" },
      "allowed-host": { type: "string", multiple: true },
      help: { type: "boolean", short: "h" },
    },
  });
  if (v.help) return console.log(USAGE);
  const port = numberFlag("--port", v.port, 8000, { lo: 0, hi: 65535, integer: true });
  if (dryRun(`would serve the play page for ${v.model} on ${v.host}:${port}`)) return;
  const dir = (await localModel(v.model!)).replace(/\/+$/, "");
  const model = await loadForExport(dir);
  if (!model.tokenizer) throw new TypeError(`${dir} has no tokenizer.json; the page needs the model's tokenizer`);
  const agent = await readAgentSettings(dir);
  if (agent && agent.task !== "textcraft") {
    throw new RangeError(
      `${dir} was trained on ${agent.task}; the play page plays TextCraft only (its game is the one the page ` +
        `embeds; deno task play --help says why not the others). Evaluate it with deno task eval --model ${dir}`,
    );
  }
  const settings: PlaySettings = {
    prompt: agent?.prompt ?? textcraft.prompt,
    maxRounds: agent?.max_rounds ?? textcraft.maxRounds,
    maxTokensPerTurn: agent?.max_tokens_per_turn ?? 64,
    maxLen: agent ? agent.max_prompt_length + agent.max_response_length : 4096,
    temperature: agent?.temperature ?? 0,
    skill: await readDepthSkill(dir),
  };
  const game = await embeddedTextCraft();
  const server = await servePlay({
    game,
    model,
    modelName: dir,
    settings,
    port,
    hostname: v.host,
    allowedHosts: v["allowed-host"],
  });
  console.log(`Play TextCraft beside ${dir}: open ${server.url}`);
}
