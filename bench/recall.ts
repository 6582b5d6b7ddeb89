/**
 * `deno task bench recall [--task copy|induction|lookup|all] [...]`: how many training steps the built-in tiny
 * model (configs/models/tiny.yaml) needs to learn to reproduce tokens from its context. This is what the TextCraft
 * warm start asks of it: every action copies item names out of the command list. Four synthetic probes with random
 * item ids, trained from scratch with AdamW on the same forward, backward and optimizer as `deno task train`:
 *
 *   copy       a random string of `length` items, a separator, the same string again; targets: the second string.
 *              One attention head that looks a fixed distance back solves it.
 *   induction  the same with a random length from length / 4 to length, so no fixed distance works: each next item
 *              must be found by content (where did the current item occur before, what followed it), which takes
 *              two attention layers working together: an induction head.
 *   seek       a random string of `length` items, a separator, one item from a random place in its first half,
 *              then what follows it there (a quarter to a half of `length` items). Unlike induction, the copy's
 *              source does not sit as far from the first string's start as the answer from the separator, so no
 *              count of positions finds it: only a match on content (an induction head) does. A model that has
 *              learned `induction` by counting positions from the separators still fails this one.
 *   lookup     command-list lines `craft n X using m Y[, k Z]`, a goal `X`, then the goal's line; targets: the line.
 *
 * It prints the mean loss of the item tokens among the targets every few steps (log(items) when nothing is copied,
 * near 0 when copying works) and the first step at which it fell below 1 nat.
 */
import { Batch } from "../src/gpu/batch.ts";
import { getGpu, type Gpu } from "../src/gpu/device.ts";
import { Rng } from "../src/util/random.ts";
import { parseModelConfig } from "../src/model/config.ts";
import { initParams } from "../src/model/init.ts";
import { PackedInputs, packSequences } from "../src/model/packing.ts";
import { parseTinySpec, type TinySpec } from "../src/model/tiny.ts";
import { Transformer } from "../src/model/transformer.ts";
import { TensorSet } from "../src/model/weights.ts";
import { AdamW } from "../src/update/optimizer.ts";
import { nllGrad } from "../src/train/nll.ts";
import { dryRun, numberFlag, parseFlags } from "../src/command/args.ts";
import { terminalReporter } from "../src/command/progress.ts";

/** Usage text of the `recall` subcommand. */
export const RECALL_USAGE =
  "Usage: deno task bench recall [--task copy|induction|lookup|all] [--steps N] [--batch N] " +
  "[--length N] [--lines N] [--lr X] [--every N] [--seed S] [--tiny FILE] [--json]\n" +
  "  --task    which probe (default all)\n" +
  "  --steps   optimizer steps per probe (default 300)\n" +
  "  --batch   sequences per step (default 8)\n" +
  "  --length  items in the copy and seek probes' strings, the most in the induction probe's (default 40)\n" +
  "  --lines   command-list lines in the lookup probe (default 6)\n" +
  "  --lr      peak learning rate, 20 warm-up steps (default 3e-3, as the TextCraft warm start)\n" +
  "  --every   steps between printed points (default 25)\n" +
  "  --tiny    a model YAML shaped like configs/models/tiny.yaml (default: that file)\n" +
  "  --json    one JSON object per probe and line";

/** Token ids of the probes' vocabulary: a few structure tokens, then counts, then items up to VOCAB. */
const VOCAB = 2048;
const TOKEN = { bos: 1, sep: 2, craft: 3, using: 4, comma: 5, newline: 6, goal: 7 } as const;
const COUNTS = { first: 8, n: 8 };
const ITEMS = { first: 100, n: VOCAB - 100 };

export type RecallTask = "copy" | "induction" | "seek" | "lookup";
const TASKS: readonly RecallTask[] = ["copy", "induction", "seek", "lookup"];

/** One probe sequence: ids, which tokens are targets, and which targets are items. */
export interface RecallSequence {
  ids: number[];
  /** 1 where ids[j] is a target (predicted at position j - 1). */
  target: number[];
  /** 1 where ids[j] is a target item token. */
  item: number[];
}

/** A random sequence of a probe. */
export function recallSequence(task: RecallTask, rng: Rng, o: { length: number; lines: number }): RecallSequence {
  const item = () => ITEMS.first + Math.floor(rng.float() * ITEMS.n);
  const count = () => COUNTS.first + Math.floor(rng.float() * COUNTS.n);
  let prefix: number[], answer: number[];
  if (task === "seek") {
    if (o.length < 4) throw new RangeError(`--length must be at least 4 for the seek probe, got ${o.length}`);
    const xs = Array.from({ length: o.length }, item);
    const from = Math.floor(rng.float() * Math.ceil(o.length / 2));
    const n = Math.max(1, Math.floor(o.length / 4) + Math.floor(rng.float() * Math.ceil(o.length / 4)));
    prefix = [TOKEN.bos, ...xs, TOKEN.sep, xs[from]];
    answer = xs.slice(from + 1, from + 1 + n);
  } else if (task !== "lookup") {
    const span = Math.ceil(o.length / 4);
    const length = task === "copy" ? o.length : span + Math.floor(rng.float() * (o.length - span + 1));
    answer = Array.from({ length }, item);
    prefix = [TOKEN.bos, ...answer, TOKEN.sep];
  } else {
    const lines = Array.from({ length: o.lines }, () => {
      const line = [TOKEN.craft, count(), item(), TOKEN.using, count(), item()];
      if (rng.float() < 0.5) line.push(TOKEN.comma, count(), item());
      return [...line, TOKEN.newline];
    });
    const goal = lines[Math.floor(rng.float() * lines.length)];
    prefix = [TOKEN.bos, ...lines.flat(), TOKEN.goal, goal[2], TOKEN.newline];
    answer = goal;
  }
  const ids = [...prefix, ...answer];
  const target = ids.map((_, j) => (j >= prefix.length ? 1 : 0));
  return { ids, target, item: ids.map((t, j) => (target[j] && t >= ITEMS.first ? 1 : 0)) };
}

/** One probe's result. */
export interface RecallReport {
  task: RecallTask;
  steps: number;
  batch: number;
  /** Mean item-token loss (nats) over each window of `every` steps, ending at `step`. */
  curve: { step: number; itemLoss: number; loss: number }[];
  /** First window end where the item loss fell below 1 nat; null when it never did. */
  learnedAt: number | null;
  /** log(number of items): the item loss of a model that copies nothing. */
  chanceLoss: number;
  secondsPerStep: number;
}

interface Settings {
  steps: number;
  batch: number;
  length: number;
  lines: number;
  lr: number;
  every: number;
  seed: number;
  /** The model's settings (default configs/models/tiny.yaml). */
  spec?: TinySpec;
}

/** Trains a fresh tiny-shaped model on one probe and records its item loss; `onStep` is told of each step. */
export async function runRecall(
  gpu: Gpu,
  task: RecallTask,
  s: Settings,
  onStep: (step: number, itemLoss: number) => void = () => {},
): Promise<RecallReport> {
  const { init_std, seed, ...hf } = s.spec ?? parseTinySpec();
  const config = parseModelConfig({ ...hf, model_type: "qwen2", vocab_size: VOCAB }, "recall probe model");
  const model = Transformer.fromHost(gpu, config, initParams(config, seed, { std: init_std }));
  const weights = model.weights;
  const grads = TensorSet.zeros(gpu, config);
  const opt = new AdamW(gpu, weights, grads, { beta1: 0.9, beta2: 0.999, eps: 1e-8, weightDecay: 0, maxGradNorm: 1 });
  const rng = new Rng(s.seed);
  const curve: RecallReport["curve"] = [];
  let itemSum = 0, itemCount = 0, lossSum = 0;
  const start = performance.now();
  try {
    for (let step = 1; step <= s.steps; step++) {
      const seqs = Array.from({ length: s.batch }, () => recallSequence(task, rng, s));
      // Position p scores token p + 1 of the packed batch; the last position of each sequence scores nothing.
      const next = (f: (q: RecallSequence) => number[]) => seqs.flatMap((q) => [...f(q).slice(1), 0]);
      const target = next((q) => q.target), item = next((q) => q.item);
      const targets = target.reduce((a, b) => a + b, 0);
      const nll = nllGrad(gpu, target.map((t) => t / targets));
      const inputs = new PackedInputs(gpu, packSequences(seqs.map((q) => ({ ids: q.ids }))));
      const batch = new Batch(gpu);
      grads.clear(batch);
      const out = model.forward(batch, inputs, { grads, lossGrad: nll.grad });
      opt.record(batch, s.lr * Math.min(1, step / 20));
      const [stats, logp] = await batch.read([opt.stats, out.logp]);
      opt.commit(stats);
      for (const t of [out.logp, out.entropy]) t.release();
      nll.release();
      inputs.release();
      let stepItems = 0, stepCount = 0;
      logp.forEach((v, p) => {
        lossSum -= (v * target[p]) / targets;
        if (item[p]) (stepItems -= v), stepCount++;
      });
      itemSum += stepItems;
      itemCount += stepCount;
      onStep(step, stepItems / stepCount);
      if (step % s.every === 0 || step === s.steps) {
        const window = step - (curve.at(-1)?.step ?? 0);
        curve.push({ step, itemLoss: itemSum / itemCount, loss: lossSum / window });
        itemSum = itemCount = lossSum = 0;
      }
    }
  } finally {
    weights.release();
    grads.release();
    opt.release();
  }
  return {
    task,
    steps: s.steps,
    batch: s.batch,
    curve,
    learnedAt: curve.find((c) => c.itemLoss < 1)?.step ?? null,
    chanceLoss: Math.log(ITEMS.n),
    secondsPerStep: (performance.now() - start) / 1000 / s.steps,
  };
}

/** Runs the subcommand. */
export async function main(args: string[]): Promise<void> {
  const { values: v } = parseFlags("deno task bench recall", {
    args,
    options: {
      task: { type: "string", default: "all" },
      steps: { type: "string" },
      batch: { type: "string" },
      length: { type: "string" },
      lines: { type: "string" },
      lr: { type: "string" },
      every: { type: "string" },
      seed: { type: "string" },
      tiny: { type: "string" },
      json: { type: "boolean", default: false },
      help: { type: "boolean", short: "h" },
    },
  });
  if (v.help) return console.log(RECALL_USAGE);
  if (![...TASKS, "all"].includes(v.task!)) {
    throw new RangeError(`--task must be ${TASKS.join(", ")} or all, got "${v.task}"`);
  }
  const tasks = v.task === "all" ? TASKS : [v.task as RecallTask];
  if (dryRun(`would measure recall on ${tasks.join(", ")}`)) return;
  const s: Settings = {
    steps: numberFlag("--steps", v.steps, 300, { lo: 1, integer: true }),
    batch: numberFlag("--batch", v.batch, 8, { lo: 1, hi: 256, integer: true }),
    length: numberFlag("--length", v.length, 40, { lo: 1, hi: 1000, integer: true }),
    lines: numberFlag("--lines", v.lines, 6, { lo: 1, hi: 100, integer: true }),
    lr: numberFlag("--lr", v.lr, 3e-3, { lo: 0, hi: 1 }),
    every: numberFlag("--every", v.every, 25, { lo: 1, integer: true }),
    seed: numberFlag("--seed", v.seed, 7, { integer: true }),
    spec: v.tiny ? parseTinySpec(await Deno.readTextFile(v.tiny), v.tiny) : undefined,
  };
  const gpu = await getGpu();
  const reporter = terminalReporter();
  for (const task of tasks) {
    const bar = reporter.bar(`recall ${task}`, s.steps);
    const r = await runRecall(gpu, task, s, (_, loss) => bar.tick(1, `item loss ${loss.toFixed(2)}`));
    bar.done();
    if (v.json) {
      console.log(JSON.stringify(r));
      continue;
    }
    console.log(`${task}: ${r.batch} sequences per step, ${r.secondsPerStep.toFixed(2)} s per step`);
    for (const c of r.curve) {
      console.log(
        `  step ${String(c.step).padStart(5)}  item loss ${c.itemLoss.toFixed(3)}  loss ${c.loss.toFixed(3)}`,
      );
    }
    const learned = r.learnedAt === null ? `not within ${r.steps} steps` : `by step ${r.learnedAt}`;
    console.log(`  item loss below 1 nat ${learned} (chance ${r.chanceLoss.toFixed(2)})`);
  }
}
