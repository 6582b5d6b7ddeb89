/**
 * What `deno task bench gpu` writes: the parts' JSON rows gathered into one object, and its Markdown table. Plain
 * functions of the parts' outputs (no GPU), so the layout is tested on made-up rows.
 */
import type { ModelReport } from "./model.ts";
import { type Ceilings, type ModelRoofline, phaseLines, rooflinePhases } from "./roofline_phases.ts";
import type { TrainBenchReport } from "./train.ts";

/** One part as it ran: its `deno task bench` arguments, its JSON rows and how it ended. */
export interface PartRun {
  name: string;
  args: string[];
  seconds: number;
  /** Exit code; null when it was stopped at its time limit. */
  code: number | null;
  timedOut: boolean;
  /** The JSON objects of its standard output, one per line (kept when it was stopped early). */
  rows: Record<string, unknown>[];
  /** Why it did not run, or the last lines of its standard error when it failed. */
  note?: string;
}

/** The whole run: `<out>/bench-gpu.json`. */
export interface GpuBench {
  command: string;
  started: string;
  finished: string;
  quick: boolean;
  budgetSeconds: number;
  deno: string;
  adapter: string | null;
  parts: PartRun[];
  ceilings: Ceilings | null;
  /** Each measured model's phases against the ceilings (absent without ceilings or models). */
  roofline: ModelRoofline[];
}

/** The first row of a part with this key, or undefined. */
function row(parts: readonly PartRun[], name: string, key: string): Record<string, unknown> | undefined {
  return parts.find((p) => p.name === name)?.rows.find((r) => key in r);
}

/** The ceilings, models and phases found among the parts' rows. */
export function gather(parts: readonly PartRun[]): Pick<GpuBench, "adapter" | "ceilings" | "roofline"> {
  const roof = row(parts, "roofline", "ceilings") as { adapter?: string; ceilings?: Ceilings } | undefined;
  const ceilings = roof?.ceilings ?? null;
  const models = parts.filter((p) => p.name.startsWith("model")).flatMap((p) => p.rows) as unknown as ModelReport[];
  const adapter = roof?.adapter ?? models[0]?.adapter ?? null;
  return { adapter, ceilings, roofline: ceilings ? models.map((m) => rooflinePhases(ceilings, m)) : [] };
}

const num = (x: number, digits = 0) => x.toLocaleString("en-US", { maximumFractionDigits: digits });
const pct = (x: number | undefined) => x === undefined ? "" : `, ${(100 * x).toPrecision(2)}% of the ceiling`;

/** The Markdown report: the headline table, the phases, the tuned matmuls and the parts. */
export function markdown(b: GpuBench): string {
  const lines = [
    `# bench gpu on ${b.adapter ?? "an unknown adapter"}`,
    "",
    `\`${b.command}\`, ${b.started} to ${b.finished}; Deno ${b.deno}${b.quick ? "; --quick (smoke sizes)" : ""}.`,
    "",
    "| measurement | result | part |",
    "| --- | --- | --- |",
  ];
  const add = (what: string, result: string, part: string) => lines.push(`| ${what} | ${result} | ${part} |`);
  if (b.ceilings) {
    add("f32 FMA rate (microkernel)", `${num(b.ceilings.fmaGflops, 1)} GFLOP/s`, "roofline");
    add("memory bandwidth (copy microkernel)", `${num(b.ceilings.bandwidthGBs, 1)} GB/s`, "roofline");
  }
  for (const p of b.parts.filter((x) => x.name.startsWith("model"))) {
    for (const m of p.rows as unknown as ModelReport[]) {
      const r = b.roofline.find((x) => x.model === m.model);
      const phase = (name: string) => r?.phases.find((x) => x.phase === name);
      const t = m.train, d = m.decode;
      add(
        `${m.model} training, ${num(t.tokens)}-token batch`,
        `${num(t.tokensPerS)} tokens/s (${num(t.bestMs, 1)} ms a step)${pct(phase("train step, wall")?.ofFma)}`,
        p.name,
      );
      add(
        `${m.model} decode, ${d.seqs} sequences`,
        `${num(d.tokensPerS)} tokens/s${pct(phase("decode step, weights")?.ofBandwidth)} (weights' bandwidth)`,
        p.name,
      );
    }
  }
  const train = row(b.parts, "train", "wallSeconds") as TrainBenchReport | undefined;
  if (train) {
    const phases = Object.entries(train.phases).map(([k, s]) => `${k} ${s.toFixed(1)} s`).join(", ");
    add("main job's RL steps", `${num(train.wallSeconds, 1)} s in all; ${phases || "no RL phase logged"}`, "train");
  }
  const tuned = (b.parts.find((p) => p.name === "kernels")?.rows ?? []).filter((r) => "tuned" in r);
  for (const t of tuned as unknown as { tuned: string; variant: string; seed: string; ms: Record<string, number> }[]) {
    const ms = (v: string) => typeof t.ms[v] === "number" ? `${t.ms[v].toFixed(3)} ms` : "failed";
    const vs = t.variant === t.seed ? "the seed" : `seed ${t.seed} ${ms(t.seed)}`;
    add(`tuned ${t.tuned.replace(/^\S+ /, "matmul ")}`, `${t.variant} ${ms(t.variant)} (${vs})`, "kernels");
  }
  if (b.roofline.length > 0) {
    lines.push("", "## Phases against the ceilings", "", "```text", ...b.roofline.flatMap(phaseLines), "```");
  }
  lines.push("", "## Parts", "", "| part | seconds | outcome | command |", "| --- | --- | --- | --- |");
  for (const p of b.parts) {
    const outcome = p.timedOut
      ? "stopped at its time limit"
      : p.code === 0
      ? `${p.rows.length} JSON row(s)`
      : p.code === null
      ? p.note ?? "not run"
      : `failed (exit ${p.code})`;
    const args = p.args.map((a) => /^[\w.,=/@:+-]+$/.test(a) ? a : `'${a.replaceAll("'", "'\\''")}'`).join(" ");
    lines.push(`| ${p.name} | ${p.seconds.toFixed(1)} | ${outcome} | \`deno task bench ${args}\` |`);
  }
  return lines.join("\n") + "\n";
}
