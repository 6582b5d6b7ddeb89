/**
 * Exporting a pretraining run's checkpoint (the latest, or the one at a given step) as a base model: a Hugging Face
 * directory (config.json, model.safetensors, tokenizer.json, tokenizer_config.json, generation_config.json), its
 * agent settings (crucible.json), the resolved config that rebuilds it (pretrain.yaml) and a README model card
 * written from the run's own records: data recipe, seed, steps, tokens, wall time and the checkpoint's held-out
 * results.
 */
import { parse } from "yaml";
import { saveModelDir } from "../model/model_dir.ts";
import { paramCount } from "../model/params.ts";
import { AGENT_FILE, readAgentSettings } from "../train/agent_settings.ts";
import { checkpointName, loadCheckpoint, loadLatestCheckpoint } from "../train/checkpoint.ts";

interface EvalLine {
  phase: string;
  step: number;
  avg: number;
  byCategory: Record<string, { avg: number }>;
  copy?: { names: number; replies: number };
  recovery?: { refused: number; recovered: number };
}

/**
 * Writes the model directory `out` from the run folder `runDir`: its latest checkpoint, or the one at pretraining
 * step `o.step` (which must have been saved); returns `out`.
 */
export async function exportBaseModel(runDir: string, out: string, o: { step?: number } = {}): Promise<string> {
  const step = o.step;
  const ckpt = step === undefined ? await loadLatestCheckpoint(runDir) : await stepCheckpoint(runDir, step);
  if (ckpt.state.phase !== "pretrain") {
    throw new RangeError(`${runDir} is not a pretraining run (its latest checkpoint is in phase ${ckpt.state.phase})`);
  }
  const configText = await Deno.readTextFile(`${runDir}/config.yaml`);
  const agent = await readAgentSettings(ckpt.dir);
  const evals = (await Deno.readTextFile(`${runDir}/evals.jsonl`).catch(() => "")).split("\n").filter((l) => l.trim())
    .map((l) => JSON.parse(l) as EvalLine).filter((e) => e.phase === "pretrain");
  const card = modelCard({
    name: out.split("/").filter(Boolean).pop() ?? out,
    dir: out.replace(/\/+$/, ""),
    config: parse(configText) as Record<string, Record<string, unknown>>,
    params: paramCount(ckpt.config),
    layers: ckpt.config.numLayers,
    hidden: ckpt.config.hiddenSize,
    vocab: ckpt.config.vocabSize,
    step: ckpt.state.sftStep,
    tokens: Number(ckpt.state.notes.tokens ?? 0),
    seconds: Number(ckpt.state.notes.seconds ?? 0),
    // The checkpoint's own evaluation (the last one up to its step), not a later one of the run.
    last: evals.filter((e) => e.step <= ckpt.state.sftStep).at(-1),
    runStep: Math.max(ckpt.state.sftStep, ...evals.map((e) => e.step)),
  });
  const enc = new TextEncoder();
  await saveModelDir(out, {
    config: ckpt.config,
    tensors: ckpt.tensors,
    tokenizer: ckpt.tokenizer,
    dtype: "f32",
    extra: {
      ...(agent ? { [AGENT_FILE]: agent } : {}),
      "pretrain.yaml": enc.encode(configText),
      "README.md": enc.encode(card),
    },
  });
  return out;
}

/** A pretraining run's checkpoint at `step`, or an error naming the step and how checkpoints are kept. */
async function stepCheckpoint(runDir: string, step: number) {
  const name = checkpointName("pretrain", step);
  try {
    return await loadCheckpoint(`${runDir}/checkpoints/${name}`);
  } catch (e) {
    if (!(e instanceof Deno.errors.NotFound)) throw e;
    throw new Deno.errors.NotFound(
      `${runDir} has no checkpoint at step ${step} (checkpoints/${name}); pretraining saves one at the end of ` +
        `every chunk (pretrain.chunk_steps)`,
    );
  }
}

function modelCard(m: {
  name: string;
  /** The directory as the export was asked to write it: the card's rebuild line names its pretrain.yaml. */
  dir: string;
  config: Record<string, Record<string, unknown>>;
  params: number;
  layers: number;
  hidden: number;
  vocab: number;
  step: number;
  tokens: number;
  seconds: number;
  last?: EvalLine;
  /** The furthest step the run reached (past `step` when an earlier checkpoint is exported). */
  runStep: number;
}): string {
  const p = m.config.pretrain ?? {};
  const partial = typeof p.steps === "number" && m.step < p.steps;
  const pct = (x: number | undefined) => (x === undefined ? "n/a" : `${(100 * x).toFixed(1)}%`);
  const depths = m.last
    ? Object.entries(m.last.byCategory).map(([k, r]) => `${k}: ${pct(r.avg)}`).join(", ")
    : "not evaluated";
  return `# ${m.name}

A ${(m.params / 1e6).toFixed(2)} M-parameter Qwen2-architecture model (${m.layers} layers, hidden ${m.hidden},
word-level vocabulary of ${m.vocab} tokens with one token per item name), pretrained by Crucible's
\`deno task pretrain\` on synthetic crafting worlds only. It is the base model of \`deno task train textcraft\`.

## Data

Every batch is generated on the fly from (seed ${p.seed}, step): random recipe graphs of depth 1 to 4 with one to
four inputs per recipe, TextCraft's yields and counts, shared items, alternative recipes and up to ten distractor
lines, written in TextCraft's surface form; item names are drawn at random from the game's item vocabulary for every
world, so no name carries a recipe. Each world is played by the stack policy (a depth-first plan whose replies name
the items being crafted, their recipes and the action) through a simulator with TextCraft's rules and messages. A
share of generic copy strings of item names (${p.copy_share} at the start) is mixed in.${
    misreadText(m.config)
  } The generator never reads the
game's recipe tables, and no task of TextCraft's train or test split enters pretraining. Held-out worlds come from
seed ${p.eval_seed}, which training never draws from.

## Training

${m.step}${partial ? ` of the recipe's ${p.steps}` : ""} optimizer steps of about ${p.batch_tokens} tokens (${
    (m.tokens / 1e6).toFixed(1)
  } M tokens in all), AdamW at
${p.lr} with a ${(p.lr_schedule as Record<string, unknown>)?.type} schedule, in ${
    (m.seconds / 3600).toFixed(2)
  } hours of wall time on the machine that built it (2 CPU cores, WebGPU on Mesa's lavapipe).${
    m.runStep > m.step
      ? ` The run went on to step ${m.runStep}; this is its checkpoint at step ${m.step} (every held-out evaluation is in the run's evals.jsonl).`
      : partial
      ? ` This is the run's checkpoint at step ${m.step}: pretraining goes on from it, and a later export replaces it.`
      : ""
  }

## Held-out results (greedy, ${p.eval_tasks} synthetic worlds the model never saw)

- success: ${pct(m.last?.avg)} (${depths})
- item names copied right (teacher-forced): ${pct(m.last?.copy?.names)}; replies exactly right: ${
    pct(m.last?.copy?.replies)
  }${
    m.last?.recovery
      ? `\n- refused actions whose next action was accepted (recovery): ${m.last.recovery.recovered} of ${m.last.recovery.refused}`
      : ""
  }

## Rebuild

\`deno task pretrain ${m.dir}/pretrain.yaml\` replays the same batches from the same seed; on the same adapter it
gives the same weights bit for bit (floating-point results can differ between GPU drivers)${
    partial ? `: these are its checkpoint at step ${m.step}, \`checkpoints/${checkpointName("pretrain", m.step)}\`` : ""
  }.
`;
}

// The recovery data's sentence, when the recipe has it (task_options.synthetic_misreads).
function misreadText(config: Record<string, Record<string, unknown>>): string {
  const rate = config.task_options?.synthetic_misreads;
  if (typeof rate !== "number" || rate === 0) return "";
  return ` Recovery data: before each turn, a ${
    (100 * rate).toFixed(0)
  }% chance of a misread reply that the game refuses (kept as context, never trained), followed by the right one.`;
}
