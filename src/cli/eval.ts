/**
 * `deno task eval --model DIR [--model DIR2 ...] --task textcraft [--split test] [--samples-per-task N] [--seed S]
 * [--temperature T] [--max-rounds R] [--limit N] [--env-url URL ...] [--json]`: Avg@n and Pass@n overall and by
 * category, as a table (several models side by side) or as JSON (one object per model, one line each).
 */
import { parseArgs } from "node:util";
import { resolveConfig } from "../config/load.ts";
import { getGpu } from "../gpu/device.ts";
import { Generator } from "../model/generate.ts";
import { loadGpuModel } from "../model/load.ts";
import { type EvalResult, evaluate } from "../train/eval.ts";
import { rolloutOptions } from "../train/rl_step.ts";
import { checkEnv, openEnv, splitIndices } from "../train/setup.ts";
import { numberFlag } from "./args.ts";
import { terminalReporter } from "./progress.ts";

const USAGE = "Usage: deno task eval --model DIR [--model DIR ...] --task NAME [--split test] [--samples-per-task 1] " +
  "[--seed 0] [--temperature 0] [--max-rounds R] [--limit N] [--env-url URL ...] [--items FILE] [--json]";

/** Runs the command. */
export async function main(args: string[]): Promise<void> {
  const { values: v } = parseArgs({
    args,
    options: {
      model: { type: "string", multiple: true },
      task: { type: "string", default: "textcraft" },
      split: { type: "string", default: "test" },
      items: { type: "string" },
      "samples-per-task": { type: "string" },
      seed: { type: "string" },
      temperature: { type: "string" },
      "max-rounds": { type: "string" },
      limit: { type: "string" },
      "env-url": { type: "string", multiple: true },
      json: { type: "boolean" },
      help: { type: "boolean", short: "h" },
    },
  });
  if (v.help) return console.log(USAGE);
  if (!v.model?.length) throw new TypeError(`--model DIR is required. ${USAGE}`);
  const samples = numberFlag("--samples-per-task", v["samples-per-task"], 1, { lo: 1, integer: true });
  const seed = numberFlag("--seed", v.seed, 0, { integer: true });
  const temperature = numberFlag("--temperature", v.temperature, 0, { lo: 0 });
  const limit = numberFlag("--limit", v.limit, 0, { lo: 0, integer: true });
  const overrides = [`task=${v.task}`, `data.test_split=${v.split}`];
  if (v.items) overrides.push(`data.test_items=${JSON.stringify(v.items)}`);
  if (v["env-url"]) overrides.push(`env.urls=${JSON.stringify(v["env-url"])}`);
  const config = resolveConfig({ text: "", name: "eval" }, overrides);
  const env = await openEnv(config);
  const reporter = terminalReporter({ quiet: v.json });
  const results: { model: string; result: EvalResult }[] = [];
  try {
    await checkEnv(env);
    const all = await splitIndices(config, env.task, "test");
    const indices = limit > 0 ? all.slice(0, limit) : all;
    const maxRounds = numberFlag("--max-rounds", v["max-rounds"], env.task.maxRounds, { lo: 1, integer: true });
    const gpu = await getGpu();
    for (const dir of v.model) {
      const m = await loadGpuModel(gpu, dir);
      if (!m.tokenizer) throw new TypeError(`${dir} has no tokenizer.json`);
      const r = config.rollout;
      const generator = new Generator(m.model, {
        slots: r.slots,
        maxLen: Math.min(r.max_prompt_length + r.max_response_length, m.config.maxPositions),
        blockSteps: r.block_steps,
      });
      const bar = reporter.bar(`eval ${dir}`, indices.length * samples);
      const { result } = await evaluate(
        { generator, tokenizer: m.tokenizer, client: env.client, task: env.task },
        indices,
        {
          ...rolloutOptions(config, maxRounds, m.stopIds, temperature),
          samples,
          seed,
          onEpisode: () => bar.tick(),
        },
      );
      bar.done();
      generator.release();
      m.model.weights.release();
      results.push({ model: dir, result });
    }
  } finally {
    await env.close();
  }
  if (v.json) {
    for (const r of results) console.log(JSON.stringify({ model: r.model, task: v.task, split: v.split, ...r.result }));
    return;
  }
  console.log(table(results));
}

/** A text table: one row per model, Avg@n and Pass@n overall and per category. */
export function table(rows: { model: string; result: EvalResult }[]): string {
  const cats = [...new Set(rows.flatMap((r) => Object.keys(r.result.byCategory)))].sort();
  const n = rows[0]?.result.samples ?? 1;
  const head = ["model", `Avg@${n}`, `Pass@${n}`, ...cats.map((c) => `${c} (Avg)`)];
  const pct = (x: number) => `${(100 * x).toFixed(1)}%`;
  const body = rows.map((r) => [
    r.model,
    pct(r.result.avg),
    pct(r.result.pass),
    ...cats.map((c) => (r.result.byCategory[c] ? pct(r.result.byCategory[c].avg) : "")),
  ]);
  const widths = head.map((h, i) => Math.max(h.length, ...body.map((b) => b[i].length)));
  const fmt = (cells: string[]) => cells.map((c, i) => c.padEnd(widths[i])).join("  ");
  return [fmt(head), fmt(widths.map((w) => "-".repeat(w))), ...body.map(fmt)].join("\n");
}
