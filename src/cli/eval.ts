/**
 * `deno task eval --model DIR [--model DIR2 ...] --task textcraft [--split test] [--samples-per-task N] [--seed S]
 * [--temperature T] [--max-rounds R] [--limit N] [--env-url URL ...] [--json]`: Avg@n and Pass@n overall and by
 * category, as a table (several models side by side) or as JSON (one object per model, one line each). A Crucible
 * checkpoint is played with what its agent was trained with (crucible.json: prompt, round and length limits,
 * temperature) unless a flag says otherwise, so it scores here what it scored in its run. `--engine onnx` plays
 * through onnxruntime-web instead of Crucible's WGSL kernels (the same episode loop over another Sampler).
 */
import { resolveConfig } from "../config/load.ts";
import { getGpu } from "../gpu/device.ts";
import type { Tokenizer } from "../model/tokenizer.ts";
import { Generator } from "../model/generate.ts";
import { loadGpuModel } from "../model/load.ts";
import { openOnnxEngine } from "../onnx/engine.ts";
import type { Sampler } from "../rollout/agent.ts";
import { type AgentSettings, readAgentSettings, trainedTaskSet } from "../train/agent_settings.ts";
import { getTask } from "../../tasks/mod.ts";
import { coverage, type EvalResult, evaluate } from "../train/eval.ts";
import { appendEpisodes } from "../train/metrics.ts";
import { rolloutOptions } from "../rollout/options.ts";
import { checkEnv, openEnv, splitIndices } from "../train/setup.ts";
import { dryRun, numberFlag, parseFlags } from "../command/args.ts";
import { terminalReporter } from "../command/progress.ts";
import { localModel } from "../command/model_arg.ts";

const USAGE = `Usage: deno task eval --model DIR [--model DIR ...] [options]

Plays every task of a split with each model (greedy by default) and prints Avg@n and Pass@n, overall and by
category (TextCraft: depth; BFCL: category, then involved class), one row per model. A Crucible checkpoint is played with what it was trained with
(its crucible.json: task, prompt, round and length limits, temperature, and the task set it was trained on, such
as BFCL's generated classes and categories) unless a flag below says otherwise. The line naming the tasks played
(on stderr) says which set it is.

Options:
  --model DIR            a Hugging Face model directory or a Crucible checkpoint (repeat to compare), or a
                         Hub name org/name[@revision], downloaded once into the Hugging Face cache
  --adapter DIR          a PEFT LoRA adapter (a LoRA run's checkpoint) on every --model, which is its base;
                         the adapter's crucible.json, if any, applies
  --task NAME            the task (default: the checkpoint's, else textcraft)
  --split NAME           the task's built-in split, or one the server publishes (BFCL's: bfcl, every entry it
                         holds) (default test)
  --items FILE           an AgentGym-RL-Data-ID item file instead of the split
  --samples-per-task N   episodes per task: Avg@N and Pass@N (default 1)
  --temperature T        sampling temperature, 0 = greedy (default: the checkpoint's, else 0)
  --max-rounds R         round limit per episode (default: the checkpoint's, else the task's)
  --seed S               seed of the sampling streams (default 0)
  --limit N              only the first N tasks of the split (default all)
  --env-url URL          a running AgentGym server (repeatable); default Crucible's embedded TextCraft server
  --task-option K=V      a task option for the embedded server and the task (repeatable), e.g. for BFCL's own
                         files: --task-option data_dir=DIR
  --episodes FILE        also append every episode (turns, rewards, conversation) to FILE as JSON lines
  --json                 one JSON object per model instead of the table
  --engine NAME          wgsl (Crucible's kernels, default), onnx (onnxruntime-web's wasm backend on the CPU)
                         or onnx-webgpu (its WebGPU backend)

Examples:
  deno task eval --model models/crucible-tiny
  deno task eval --model runs/smoke/checkpoints/final --model models/crucible-base --json   # deno task train --help
  deno task train textcraft --model Qwen/Qwen2.5-0.5B-Instruct model.lora_rank=16 --run-dir runs/lora   # a LoRA run
  deno task eval --model Qwen/Qwen2.5-0.5B-Instruct --adapter runs/lora/checkpoints/final`;

/** Runs the command. */
export async function main(args: string[]): Promise<void> {
  const { values: v } = parseFlags("deno task eval", {
    args,
    options: {
      model: { type: "string", multiple: true },
      adapter: { type: "string" },
      task: { type: "string" },
      split: { type: "string", default: "test" },
      items: { type: "string" },
      "samples-per-task": { type: "string" },
      seed: { type: "string" },
      temperature: { type: "string" },
      "max-rounds": { type: "string" },
      limit: { type: "string" },
      "env-url": { type: "string", multiple: true },
      "task-option": { type: "string", multiple: true },
      json: { type: "boolean" },
      episodes: { type: "string" },
      engine: { type: "string", default: "wgsl" },
      help: { type: "boolean", short: "h" },
    },
  });
  if (v.help) return console.log(USAGE);
  if (!v.model?.length) throw new TypeError(`--model DIR is required. ${USAGE}`);
  const samples = numberFlag("--samples-per-task", v["samples-per-task"], 1, { lo: 1, integer: true });
  const seed = numberFlag("--seed", v.seed, 0, { integer: true });
  const limit = numberFlag("--limit", v.limit, 0, { lo: 0, integer: true });
  if (!["wgsl", "onnx", "onnx-webgpu"].includes(v.engine!)) {
    throw new RangeError(`--engine must be wgsl, onnx or onnx-webgpu, got "${v.engine}"`);
  }
  if (v.adapter && v.engine !== "wgsl") {
    throw new RangeError(
      "--adapter runs with --engine wgsl; for onnx, evaluate a merged directory (model.save_merged)",
    );
  }
  if (dryRun(`would evaluate ${v.model.join(", ")} on the ${v.split} split (engine ${v.engine})`)) return;
  const names = [...v.model]; // as given, for the table; v.model holds the local directories
  for (const [k, m] of names.entries()) v.model[k] = await localModel(m);
  // A checkpoint's own settings (crucible.json) apply unless a flag says otherwise; an adapter's before its base's.
  const own = v.adapter ? await readAgentSettings(v.adapter) : undefined;
  const agents = await Promise.all(v.model.map(async (dir) => own ?? await readAgentSettings(dir)));
  const taskName = v.task ?? agents.find((a) => a)?.task ?? "textcraft";
  const overrides = [`task=${taskName}`, `data.test_split=${v.split}`];
  if (v.items) overrides.push(`data.test_items=${JSON.stringify(v.items)}`);
  if (v["env-url"]) overrides.push(`env.urls=${JSON.stringify(v["env-url"])}`);
  for (const o of v["task-option"] ?? []) {
    if (!/^[\w.]+=/.test(o)) throw new TypeError(`--task-option takes KEY=VALUE (e.g. data_dir=DIR), got "${o}"`);
    overrides.push(`task_options.${o}`);
  }
  // The task set the checkpoints were trained on (BFCL: their generated classes and categories), unless a flag names it.
  const given = new Set((v["task-option"] ?? []).map((o) => o.split("=")[0]));
  const trainedSet = trainedTaskSet(getTask(taskName), agents, given);
  for (const [k, x] of Object.entries(trainedSet)) overrides.unshift(`task_options.${k}=${JSON.stringify(x)}`);
  if (Object.keys(trainedSet).length) {
    console.error(
      `Task set from the checkpoint's crucible.json: ${
        Object.entries(trainedSet).map(([k, x]) => `${k}=${JSON.stringify(x)}`).join(" ")
      } (--task-option KEY=VALUE to change it)`,
    );
  }
  const config = resolveConfig({ text: "", name: "eval" }, overrides);
  const env = await openEnv(config);
  const reporter = terminalReporter({ quiet: v.json });
  const results: { model: string; result: EvalResult }[] = [];
  const splitName = v.items ? "item-file" : v.split!;
  try {
    await checkEnv(env);
    // The tasks the server holds, where it says (BFCL's server): its splits, and its labels come with each episode.
    const served = await env.client.tasks();
    const splits = [...new Set([...Object.keys(served?.splits ?? {}), ...Object.keys(env.task.splits ?? {})])];
    if (!v.items && !splits.includes(v.split!)) {
      throw new RangeError(
        `--split ${v.split}: ${taskName} has no such split; ` +
          (splits.length ? `its splits are ${splits.join(", ")}; or give ` : "it has none built in: give ") +
          "--items FILE (an AgentGym-RL-Data-ID item file)",
      );
    }
    const { indices: all, note } = await splitIndices(config, { task: env.task, served }, "test");
    // What is played, on stderr (stdout may be JSON): the server's own split, or a built-in split of what it holds.
    if (note) console.error(note);
    else if (served?.about && !v.items) console.error(`${v.split}: ${all.length} tasks of ${served.about}`);
    const indices = limit > 0 ? all.slice(0, limit) : all;
    const gpu = v.engine === "wgsl" ? await getGpu() : undefined;
    for (const [k, dir] of v.model.entries()) {
      const agent = agents[k];
      const maxRounds = numberFlag("--max-rounds", v["max-rounds"], agent?.max_rounds ?? env.task.maxRounds, {
        lo: 1,
        integer: true,
      });
      const temperature = numberFlag("--temperature", v.temperature, agent?.temperature ?? 0, { lo: 0 });
      const r = agent ? { ...config.rollout, ...agentLimits(agent) } : config.rollout;
      const maxLen = r.max_prompt_length + r.max_response_length;
      let m: { tokenizer?: Tokenizer; stopIds: number[] }, generator: Sampler, release: () => unknown;
      if (gpu) {
        const g = await loadGpuModel(gpu, dir, { adapter: v.adapter });
        const lengths = { maxLen: Math.min(maxLen, g.config.maxPositions), blockSteps: r.block_steps };
        const gen = new Generator(g.model, { slots: r.slots, ...lengths, cache: r.kv_cache });
        [m, generator, release] = [g, gen, () => (gen.release(), g.model.weights.release(), g.model.lora?.release())];
      } else {
        const backend = v.engine === "onnx" ? "wasm" : "webgpu";
        const e = await openOnnxEngine(dir, { backend, slots: r.slots, maxLen });
        [m, generator, release] = [e, e.sampler, e.release];
      }
      if (!m.tokenizer) throw new TypeError(`${dir} has no tokenizer.json`);
      const task = agent ? { ...env.task, prompt: agent.prompt } : env.task;
      const bar = reporter.bar(`eval ${dir}`, indices.length * samples);
      const { result, trajectories } = await evaluate(
        { generator, tokenizer: m.tokenizer, client: env.evalClient, task },
        indices,
        {
          ...rolloutOptions({ ...config, rollout: r }, maxRounds, m.stopIds, temperature),
          samples,
          seed,
          onEpisode: () => bar.tick(),
        },
      );
      const scored = { ...result, split: splitName, splitTasks: all.length };
      bar.done(`success ${(100 * result.avg).toFixed(1)}% ${coverage(scored)}`);
      if (v.episodes) await appendEpisodes(v.episodes, { phase: `eval ${dir}`, step: 0 }, trajectories, m.tokenizer);
      await release();
      results.push({ model: names[k], result: scored });
    }
  } finally {
    await env.close();
  }
  if (v.json) {
    for (const r of results) {
      console.log(JSON.stringify({ model: r.model, task: taskName, split: v.split, ...r.result }));
    }
    return;
  }
  console.log(table(results));
  if (results[0]) console.log(`Scored ${coverage(results[0].result)}, ${samples} episode(s) each.`);
}

/** The length limits and KV cache a checkpoint was trained with, as rollout config keys. */
function agentLimits(a: AgentSettings) {
  return {
    kv_cache: a.kv_cache ?? "f32",
    max_tokens_per_turn: a.max_tokens_per_turn,
    max_prompt_length: a.max_prompt_length,
    max_response_length: a.max_response_length,
  };
}

/** A text table: one row per model, Avg@n and Pass@n overall and per category. */
export function table(rows: { model: string; result: EvalResult }[]): string {
  const cats = [...new Set(rows.flatMap((r) => Object.keys(r.result.byCategory)))].sort();
  const groups = [...new Set(rows.flatMap((r) => Object.keys(r.result.byGroup ?? {})))].sort();
  const n = rows[0]?.result.samples ?? 1;
  const head = ["model", `Avg@${n}`, `Pass@${n}`, ...cats.concat(groups).map((c) => `${c} (Avg)`)];
  const pct = (x: number) => `${(100 * x).toFixed(1)}%`;
  const body = rows.map((r) => [
    r.model,
    pct(r.result.avg),
    pct(r.result.pass),
    ...cats.map((c) => (r.result.byCategory[c] ? pct(r.result.byCategory[c].avg) : "")),
    ...groups.map((g) => (r.result.byGroup?.[g] ? pct(r.result.byGroup[g].avg) : "")),
  ]);
  const widths = head.map((h, i) => Math.max(h.length, ...body.map((b) => b[i].length)));
  const fmt = (cells: string[]) => cells.map((c, i) => c.padEnd(widths[i])).join("  ");
  return [fmt(head), fmt(widths.map((w) => "-".repeat(w))), ...body.map(fmt)].join("\n");
}
