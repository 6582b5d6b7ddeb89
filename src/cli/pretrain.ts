/**
 * `deno task pretrain [NAME|CONFIG.yaml] [--run-dir DIR] [--resume RUN_DIR] [--minutes N] [--save-model DIR]
 * [--step N] [--add-layer AT] [--extend-vocab] [key.path=value ...]`: pretrains a base model on the task's synthetic
 * tasks (config section `pretrain`), in chunks that each end with a held-out evaluation and a checkpoint.
 * `--save-model` writes the run's latest checkpoint (or the one at `--step`) as a Hugging Face model directory with a
 * model card; `--export` is its old name, still accepted with a note (`deno task export` is the verb for ONNX). A
 * saved model goes on in a new run folder, with one more layer (`--add-layer`) or the task's new tokens appended to
 * its vocabulary (`--extend-vocab`).
 */
import { stringify } from "yaml";
import { resolveConfig } from "../config/load.ts";
import type { RunConfig } from "../config/schema.ts";
import { configSource } from "../config/presets.ts";
import {
  checkGrowth,
  extendRunCheckpoint,
  growRunCheckpoint,
  isSavedBaseModel,
  runFromBaseModel,
  saveBaseModel,
} from "../pretrain/base_model.ts";
import { quotedSample } from "../model/extend_vocab.ts";
import { tinySpecOf } from "../model/tiny.ts";
import { runPretraining } from "../pretrain/run.ts";
import { configuredTask, taskTokenizer } from "../train/setup.ts";
import { writeReport } from "../report/write.ts";
import { dryRun, numberFlag, parseFlags } from "../command/args.ts";
import { terminalReporter } from "../command/progress.ts";
import { EXIT_STOPPED, readRunConfig, refuseExistingRun, stopOnSignals } from "./train.ts";

const USAGE = `Usage: deno task pretrain [NAME|CONFIG.yaml] [--run-dir DIR] [--resume RUN_DIR] [--minutes N]
                          [--save-model DIR [--step N]] [--add-layer AT] [--extend-vocab] [key.path=value ...]

Pretrains a base model on a task's synthetic tasks (TextCraft: random crafting worlds, never the game's recipes).
Every batch is drawn from (pretrain.seed, step), so a run resumes bit for bit; every pretrain.chunk_steps steps it
evaluates greedily on held-out synthetic tasks (pretrain.eval_seed) and saves a checkpoint.

Options:
  NAME|CONFIG.yaml   a shipped config (default textcraft_pretrain) or a YAML file
  --run-dir DIR      the run folder (default runs/<task>-pretrain-<time>)
  --resume RUN_DIR   continue a run from its latest checkpoint; overrides that change its config are refused.
                     A model directory that --save-model wrote goes on from its step in a new --run-dir DIR, with
                     its config and the overrides given (data and schedule, not model.*, task or the prompt);
                     AdamW's moments start from zero: a model directory holds none
  --minutes N        stop after N minutes with a checkpoint (resume later); default: run to pretrain.steps
  --save-model DIR   afterwards, write the latest checkpoint to DIR as a model directory with a README card
                     (--export DIR, its old name, still works)
  --step N           with --save-model, the checkpoint of step N instead (one is saved at every chunk's end)
  --add-layer AT     with --resume MODEL_DIR --run-dir DIR: go on with one more layer, inserted at index AT (0 first,
                     the layer count after the last), that starts as a no-op (zero o_proj and down_proj: the same
                     logits); give its shape with model.tiny=NAME|FILE (crucible_base_3 is crucible_base's, 3 layers)
  --extend-vocab     with --resume MODEL_DIR --run-dir DIR: append to the model's word-level vocabulary the tokens the
                     task's vocabulary has today (new phrases, new words) after its old ids, each with a new embedding
                     row, the mean of the rows its text had (the same logits on the old tokens); with --add-layer,
                     the layer is added first
  key.path=value     config overrides, e.g. pretrain.steps=4 pretrain.chunk_steps=2

Exit codes: 0 pretraining reached pretrain.steps; 3 it stopped early with a checkpoint; 2 an error.

Examples:
  deno task pretrain --minutes 120 --run-dir runs/pretrain   # two hours of the shipped recipe, then resume
  deno task pretrain --resume runs/pretrain --save-model models/my-base   # its latest checkpoint, as a model
  deno task pretrain --resume runs/pretrain --save-model models/my-base --step 2000   # a saved step of the run
  deno task pretrain --resume models/crucible-base --run-dir runs/base-2 --minutes 90   # on from a saved model
  deno task pretrain --resume models/crucible-base --run-dir runs/base-3 --add-layer 1 model.tiny=crucible_base_3
  deno task pretrain --resume models/crucible-base --run-dir runs/base-4 --extend-vocab   # today's new phrases`;

/** The flags that change a saved model as a new run starts from it, and what each does to it. */
const MODEL_CHANGES = { "--add-layer": "grows", "--extend-vocab": "extends" } as const;

/** Runs the command. */
export async function main(args: string[]): Promise<void> {
  const { values: v, positionals } = parseFlags("deno task pretrain", {
    args,
    allowPositionals: true,
    options: {
      "run-dir": { type: "string" },
      resume: { type: "string" },
      minutes: { type: "string" },
      "save-model": { type: "string" },
      export: { type: "string" },
      step: { type: "string" },
      "add-layer": { type: "string" },
      "extend-vocab": { type: "boolean" },
      help: { type: "boolean", short: "h" },
    },
  });
  if (v.help) return console.log(USAGE);
  const overrides = positionals.filter((p) => p.includes("="));
  const names = positionals.filter((p) => !p.includes("="));
  if (names.length > 1) throw new TypeError(`Give one config name or file, got ${names.join(", ")}. See --help.`);
  const minutes = v.minutes === undefined ? undefined : numberFlag("--minutes", v.minutes, 0, { lo: 0 });
  const step = v.step === undefined ? undefined : numberFlag("--step", v.step, 0, { lo: 1, integer: true });
  const saveTo = saveModelFlag(v["save-model"], v.export);
  if (step !== undefined && !saveTo) {
    throw new TypeError("--step picks the checkpoint --save-model writes; give --save-model DIR");
  }
  const addLayer = v["add-layer"] === undefined
    ? undefined
    : numberFlag("--add-layer", v["add-layer"], 0, { lo: 0, integer: true });
  if (
    dryRun(
      `would pretrain${v.resume ? `, resuming ${v.resume}` : ""}${saveTo ? `, saving the model to ${saveTo}` : ""}`,
    )
  ) {
    return;
  }
  let runDir = v["run-dir"];
  let config;
  const fromModel = v.resume !== undefined && await isSavedBaseModel(v.resume.replace(/\/+$/, ""));
  const change = ([["--add-layer", addLayer !== undefined], ["--extend-vocab", v["extend-vocab"] === true]] as const)
    .find(([, given]) => given)?.[0];
  if (change && !fromModel) {
    throw new TypeError(
      `${change} ${MODEL_CHANGES[change]} a model that --save-model wrote: give --resume MODEL_DIR --run-dir ` +
        "NEW_DIR (save a run's checkpoint first with --resume RUN_DIR --save-model MODEL_DIR)",
    );
  }
  if (v.resume) {
    runDir = v.resume.replace(/\/+$/, "");
    if (fromModel) {
      const from = runDir;
      runDir = v["run-dir"];
      if (!runDir) {
        throw new TypeError(
          `${from} is a saved model directory, not a run folder: go on pretraining it in a new one with --run-dir DIR`,
        );
      }
      await refuseExistingRun(runDir);
      // A new run folder: its config is the model's with the overrides, so data and schedule may change (a
      // curriculum goes on from the weights); the shape, task and prompt, which the weights were made for, may not.
      const name = `${from}/pretrain.yaml`;
      const source = { text: await Deno.readTextFile(name), name };
      config = resolveConfig(source, overrides, { onNote: (n) => console.error(`note: ${n}`) });
      const changed = changedKeys(resolveConfig(source, []), config);
      const grows = addLayer !== undefined && changed.includes("model.tiny");
      const fixed = changed.filter((k) => /^(model\.|task$|data\.prompt\.)/.test(k) && !(grows && k === "model.tiny"));
      if (fixed.length > 0) {
        throw new TypeError(
          `Going on from ${from} with ${fixed.join(", ")} changed: its weights were made for its model, task and ` +
            "prompt; start a new pretraining instead (model.path names weights to start from)",
        );
      }
      if (addLayer !== undefined && !grows) {
        throw new TypeError(
          `--add-layer ${addLayer} needs the grown model's shape: add model.tiny=NAME|FILE, a shape that is ` +
            `${from}'s with one more layer (crucible_base_3 for crucible_base)`,
        );
      }
      const spec = grows ? await tinySpecOf(config.model.tiny) : undefined;
      if (spec) await checkGrowth(from, spec, String(config.model.tiny), addLayer!);
      const step = await runFromBaseModel(from, runDir);
      if (spec) {
        const layers = await growRunCheckpoint(runDir, { at: addLayer!, seed: spec.seed, std: spec.init_std });
        console.error(`note: grew ${from} to ${layers} layers at step ${step}: a new layer at index ${addLayer}`);
      }
      if (v["extend-vocab"]) await extendVocab(runDir, { from, config, step });
      if (changed.length > 0) await Deno.writeTextFile(`${runDir}/config.yaml`, stringify(config));
      console.error(
        `note: going on from ${from} at step ${step} in ${runDir}, with its config` +
          (changed.length > 0 ? ` changed in ${changed.join(", ")}` : "") + "; AdamW's moments start from zero",
      );
    } else {
      const source = { text: await readRunConfig(runDir), name: `${runDir}/config.yaml` };
      config = resolveConfig(source, overrides, { onNote: (n) => console.error(`note: ${n}`) });
      const changed = changedKeys(resolveConfig(source, []), config);
      if (changed.length > 0) {
        throw new TypeError(
          `Resuming ${runDir} with a changed config (${changed.join(", ")}); a resumed pretraining keeps its config`,
        );
      }
    }
  } else {
    config = resolveConfig(await configSource(names[0] ?? "textcraft_pretrain"), overrides, {
      onNote: (n) => console.error(`note: ${n}`),
    });
  }
  runDir ??= `${config.trainer.runs_dir}/${config.task}-pretrain-${stamp()}`;
  if (!v.resume) await refuseExistingRun(runDir);
  const stops = stopOnSignals();
  try {
    const s = await runPretraining({
      config,
      runDir,
      resume: v.resume !== undefined,
      reporter: terminalReporter(),
      stopRequested: stops.requested,
      minutes,
    });
    const report = await writeReport(runDir);
    const state = s.finished ? "Finished" : `Stopped at step ${s.step} of ${config.pretrain.steps}`;
    console.log(`${state} after ${(s.seconds / 60).toFixed(1)} min. Report ${report}`);
    if (!s.finished) {
      console.log(`Resume with: deno task pretrain --resume ${runDir}`);
      Deno.exitCode = EXIT_STOPPED;
    }
    if (saveTo) console.log(`Saved the base model to ${await saveBaseModel(runDir, saveTo, { step })}`);
  } finally {
    stops.release();
  }
}

/**
 * `--extend-vocab`: appends to the checkpoint of the run just started from `from` the tokens of the tokenizer a fresh
 * tiny model of the run's task would get today. A refusal (a token the model has and today's vocabulary lacks)
 * removes the new run folder, as the checks before it leave none.
 */
async function extendVocab(runDir: string, o: { from: string; config: RunConfig; step: number }): Promise<void> {
  const { from, config, step } = o;
  const { task } = await configuredTask(config);
  let added: string[];
  try {
    added = await extendRunCheckpoint(runDir, await taskTokenizer(task));
  } catch (e) {
    await Deno.remove(runDir, { recursive: true });
    throw e;
  }

  console.error(
    added.length === 0
      ? `note: the vocabulary of ${from} has every token of ${task.name}'s today: nothing to add`
      : `note: the vocabulary of ${from} gained ${added.length} tokens (e.g. ${
        quotedSample(added, 4)
      }) at step ${step}`,
  );
}

/**
 * The directory `--save-model` names, or `--export` (its old name, kept so that scripts and notes still work) with a
 * one-line note on stderr; both at once is an error.
 */
function saveModelFlag(saveModel: string | undefined, exportDir: string | undefined): string | undefined {
  if (exportDir === undefined) return saveModel;
  if (saveModel !== undefined) {
    throw new TypeError("--export is the old name of --save-model; give only --save-model DIR");
  }
  console.error("note: --export is now --save-model (deno task export writes ONNX); --export still works");
  return exportDir;
}

/** Dotted paths whose values differ between two resolved configs. */
export function changedKeys(a: unknown, b: unknown, path = ""): string[] {
  const isObject = (x: unknown) => typeof x === "object" && x !== null && !Array.isArray(x);
  if (isObject(a) && isObject(b)) {
    const keys = new Set([...Object.keys(a as object), ...Object.keys(b as object)]);
    return [...keys].flatMap((k) =>
      changedKeys((a as Record<string, unknown>)[k], (b as Record<string, unknown>)[k], path ? `${path}.${k}` : k)
    );
  }
  return JSON.stringify(a) === JSON.stringify(b) ? [] : [path];
}

function stamp(): string {
  return new Date().toISOString().replace(/[-:]/g, "").replace("T", "-").slice(0, 15);
}
