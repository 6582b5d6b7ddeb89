/**
 * A whole training run: SFT warm start (optional), evaluation, then RL steps with periodic evaluation and
 * checkpoints, all written to one run folder. The phases (phases.ts) work on one `Run` (types.ts): the learner, the
 * environment, the trainer's state and the run folder's writers. A stop request (Ctrl-C) finishes the step in
 * progress, saves a checkpoint and returns; `resume` continues from the folder's latest checkpoint exactly where it
 * stopped.
 */
import { stringify } from "yaml";
import { getGpu } from "../gpu/device.ts";
import { Generator } from "../model/generate.ts";
import { HubError } from "../model/hub.ts";
import { stalenessRule } from "../rl/off_policy.ts";
import type { Trajectory } from "../rollout/trajectory.ts";
import { freshState, hostFromCheckpoint, loadLatestCheckpoint, saveCheckpoint, tidyCheckpoints } from "./checkpoint.ts";
import { agentSettings } from "./agent_settings.ts";
import { errorMix, mixText } from "./budget.ts";
import { coverage, type EvalResult, evaluate } from "./eval.ts";
import { createLearner } from "../update/learner.ts";
import { checkpointAdapter, loraLine, runLora, saveMerged } from "./lora.ts";
import { RunLog } from "./metrics.ts";
import { sftPhase } from "./phases.ts";
import { LEARNER_PHASES } from "./learners.ts";
import { learnerOf, type RunConfig } from "../config/schema.ts";
import { parseExperts, readPreferences } from "./preferences.ts";
import { rolloutOptions } from "../rollout/options.ts";
import { diskFullStop, EnvFailed } from "./stops.ts";
import { checkEnv, checkFiles, loadModel, localModelPath, openEnv, splitIndices } from "./setup.ts";
import {
  type HostModel,
  LEARNER_PHASE,
  type LoadedCheckpoint,
  type Run,
  type RunEnv,
  type RunInputs,
  type RunOptions,
  type RunSummary,
  type TrainerState,
} from "./types.ts";

/** Runs (or resumes) training as configured. */
export async function runTraining(o: RunOptions): Promise<RunSummary> {
  const start = performance.now();
  if (o.config.model.path) {
    // A Hugging Face Hub name runs from its snapshot in the Hugging Face cache (downloaded on first use).
    const path = await localModelPath(o.config.model.path, o.reporter).catch((e) => {
      throw e instanceof HubError ? new HubError(`model.path: ${e.message}`, e.kind) : e;
    });
    if (path !== o.config.model.path) o = { ...o, config: { ...o.config, model: { ...o.config.model, path } } };
  }
  await checkFiles(o.config);
  // Read whole before the run folder is touched: a malformed file stops the run with nothing written.
  const inputs = await readInputs(o.config);
  const learner = learnerOf(o.config);
  if (o.source && learner !== "rl") {
    throw new TypeError(
      `--cluster plays RL's rollouts on workers; algorithm.learner=${learner} explores in this process. ` +
        "Leave out --cluster, or set algorithm.learner=rl",
    );
  }
  const created = !(await Deno.stat(o.runDir).then(() => true, () => false));
  await Deno.mkdir(o.runDir, { recursive: true });
  let env: RunEnv | undefined;
  let run: Run;
  try {
    env = await openEnv(o.config, { inProcess: o.inProcessEnv });
    run = await startRun(o, env, inputs);
    if (o.source) run.source = await o.source(run);
  } catch (e) {
    // A run that fails before it starts leaves no folder behind.
    await env?.close();
    if (created) await Deno.remove(o.runDir, { recursive: true }).catch(() => {});
    throw e;
  }
  try {
    const done = (interrupted: boolean): RunSummary => ({
      runDir: o.runDir,
      interrupted,
      sftEval: run.state.notes.sftEval as EvalResult | undefined,
      finalEval: run.state.notes.finalEval as EvalResult | undefined,
      seconds: (performance.now() - start) / 1000,
      lastCheckpoint: run.lastCheckpoint,
    });
    if (run.state.phase === "sft" && !await sftPhase(run)) return done(true);
    if (learner === "rl" && o.config.trainer.total_steps === 0) return done(false);
    return done(!await LEARNER_PHASES[learner](run));
  } catch (e) {
    throw diskFullStop(e, o.runDir, run.lastCheckpoint ?? run.resumed?.dir);
  } finally {
    await run.source?.close?.();
    await env.close();
  }
}

/** The run's learner, state, data and writers, from scratch or from the folder's latest checkpoint. */
async function startRun(o: RunOptions, env: RunEnv, inputs: RunInputs): Promise<Run> {
  const c = o.config;
  if (c.data.prompt_sampling.type === "signal" && !env.task.category) {
    throw new TypeError(
      `data.prompt_sampling.type=signal draws prompts by task category, and ${c.task} has none; ` +
        `use data.prompt_sampling.type=uniform`,
    );
  }
  await checkEnv(env);
  // The tasks the servers hold, where they say (BFCL's server): splits and indices follow them.
  const served = await env.client.tasks();
  const test = await splitIndices(c, { task: env.task, served }, "test");
  const train = await splitIndices(c, { task: env.task, served }, "train");
  for (const note of new Set([test.note, train.note])) if (note) o.reporter.line(note);
  const gpu = await getGpu();
  const resumed = o.resume ? await resumePoint(o, () => loadModel(c, env.task)) : undefined;
  const host = resumed ? hostFromCheckpoint(resumed) : await loadModel(c, env.task);
  if (!o.resume) await Deno.writeTextFile(`${o.runDir}/config.yaml`, stringify(c));
  o.reporter.line(
    `Run folder ${o.runDir}; model ${host.source} (${host.config.architecture}, vocab ${host.config.vocabSize}); ${gpu.name}`,
  );
  if (host.tokenizer.holes > 0) {
    o.reporter.line(
      `warning: the tokenizer of ${host.source} has no token for ${host.tokenizer.holes} of the ids below its ` +
        `largest (${host.tokenizer.vocabSize}): its tokenizer.json lost entries or belongs to another model, and ` +
        "the model's replies may not decode to what it learned. Use the model's own tokenizer.json.",
    );
  }
  const lora = await runLora(c, host.config, resumed?.adapter);
  const learner = createLearner(gpu, host, { recompute: c.model.recompute, lora });
  if (lora) o.reporter.line(loraLine(learner)!);
  const state: TrainerState = resumed
    ? structuredClone(resumed.state)
    : freshState(c.sft.enabled ? "sft" : LEARNER_PHASE[learnerOf(c)]);
  const maxLen = c.rollout.max_prompt_length + c.rollout.max_response_length;
  const generator = new Generator(learner.model, {
    slots: c.rollout.slots,
    maxLen,
    blockSteps: c.rollout.block_steps,
    cache: c.rollout.kv_cache,
  });
  const run: Run = {
    config: c,
    dir: o.runDir,
    rep: o.reporter,
    log: new RunLog(o.runDir),
    stopRequested: o.stopRequested,
    env,
    host,
    learner,
    state,
    resumed,
    rollout: { generator, tokenizer: host.tokenizer, client: env.client, task: env.task },
    staleness: stalenessRule(c.rollout.max_staleness),
    train: train.indices,
    served,
    evalSet: c.trainer.eval_limit > 0 ? test.indices.slice(0, c.trainer.eval_limit) : test.indices,
    testTasks: test.indices.length,
    inputs,
    async save(opt, name, files) {
      state.notes.logs = await logSizes(o.runDir);
      if (run.critic) state.notes.criticStep = run.critic.opt.step;
      run.lastCheckpoint = await saveCheckpoint(o.runDir, name, {
        config: host.config,
        weights: learner.model.weights,
        tokenizer: host.tokenizer,
        opt,
        state: { ...state, optimizerStep: opt?.step ?? state.optimizerStep },
        dtype: c.model.save_dtype === "auto" ? host.dtype : c.model.save_dtype,
        agent: agentSettings(c, env.task, env.options),
        critic: run.critic ? { weights: run.critic.model.weights, opt: run.critic.opt } : undefined,
        adapter: checkpointAdapter(c, learner),
        files: { ...await run.source?.checkpoint?.(), ...files },
      });
      await saveMerged(run, name);
      return run.lastCheckpoint;
    },
    evaluate: (phase, step) => evaluateRun(run, phase, step),
  };
  return run;
}

/** The files the config names that the learner reads whole: data.preferences, and eto.expert when it is a file. */
async function readInputs(c: RunConfig): Promise<RunInputs> {
  const out: RunInputs = {};
  if (c.data.preferences !== null) out.preferences = await readPreferences(c.data.preferences);
  if (learnerOf(c) === "eto" && c.eto.expert !== "oracle") {
    out.experts = parseExperts(await Deno.readTextFile(c.eto.expert), c.eto.expert, c.task);
  }
  return out;
}

/** The run's log files, which a resume cuts back to their length at the checkpoint it resumes from. */
const LOGS = ["metrics.jsonl", "rollouts.jsonl", "evals.jsonl"];

async function logSizes(runDir: string): Promise<Record<string, number>> {
  const out: Record<string, number> = {};
  for (const f of LOGS) out[f] = await Deno.stat(`${runDir}/${f}`).then((s) => s.size).catch(() => 0);
  return out;
}

/**
 * The checkpoint a resumed run continues from, after clearing what a kill left behind: half-written saves, and log
 * lines written after the checkpoint (they will be written again, once). A run killed before its first checkpoint
 * starts over. A checkpoint whose optimizer state is missing is refused unless `freshOptimizer` says otherwise.
 */
async function resumePoint(o: RunOptions, base: () => Promise<HostModel>): Promise<LoadedCheckpoint | undefined> {
  for (const prefix of ["sft", "dpo", "agentevol"]) await tidyCheckpoints(o.runDir, { prefix });
  let r: LoadedCheckpoint | undefined;
  try {
    r = await loadLatestCheckpoint(o.runDir, { base });
  } catch (e) {
    if (!(e instanceof Deno.errors.NotFound)) throw e;
  }
  const sizes = (r?.state.notes.logs ?? {}) as Record<string, number>;
  for (const f of LOGS) {
    const path = `${o.runDir}/${f}`;
    const size = await Deno.stat(path).then((s) => s.size).catch(() => undefined);
    if (size !== undefined && size > (sizes[f] ?? 0)) await Deno.truncate(path, sizes[f] ?? 0);
  }
  const s = r?.state;
  const trained = s &&
    ((s.phase === "sft" && s.sftStep > 0) || (s.phase === "rl" && s.rlStep > 0) || (s.round?.step ?? 0) > 0);
  if (r && trained && !r.moments && !o.freshOptimizer) {
    throw new Deno.errors.NotFound(
      `${r.dir}/optimizer.safetensors is missing, so the optimizer's moments cannot be restored; ` +
        "resume with --fresh-optimizer to go on with fresh moments (the run will no longer match an uninterrupted one)",
    );
  }
  return r;
}

async function evaluateRun(run: Run, phase: string, step: number): Promise<EvalResult> {
  const c = run.config;
  const total = run.evalSet.length * c.trainer.eval_samples;
  const bar = run.rep.bar(`eval ${phase}`, total);
  const played = await evaluate({ ...run.rollout, client: run.env.evalClient }, run.evalSet, {
    ...rolloutOptions(c, run.env.task.maxRounds, run.host.stopIds, c.trainer.eval_temperature),
    samples: c.trainer.eval_samples,
    seed: c.trainer.seed + 100003,
    retries: c.env.episode_retries,
    onEpisode: (t: Trajectory) => bar.tick(1, t.success ? "solved" : t.finish),
  });
  const result: EvalResult = { ...played.result, split: "test", splitTasks: run.testTasks };
  const trajectories = played.trajectories;
  const apart = [
    result.envFailures > 0 ? `${result.envFailures} environment failures` : "",
    result.overflows > 0 ? `${result.overflows} prompt overflows` : "",
  ].filter((x) => x).join(", ");
  bar.done(
    `success ${(100 * result.avg).toFixed(1)}% ${coverage(result)}${
      apart ? `, over ${result.episodes} played of ${total} episodes (${apart})` : ""
    }, mean reward ${result.meanReward.toFixed(3)}`,
  );
  if (result.episodes === 0 && result.envFailures === 0) {
    throw new RangeError(
      `The ${phase} evaluation played no episode: all ${total} first observations are longer than ` +
        `rollout.max_prompt_length=${c.rollout.max_prompt_length} tokens (prompt overflows); an evaluation without ` +
        "episodes is not 0%. Raise rollout.max_prompt_length or shorten the prompt.",
    );
  }
  if (result.envFailures > total / 2 || result.episodes === 0) {
    throw new EnvFailed(
      `The ${phase} evaluation lost ${result.envFailures} of ${total} episodes to the environment after ` +
        `${c.env.episode_retries} retries each (env.episode_retries): ${
          mixText(errorMix(
            trajectories.filter((t) => t.finish === "env_failure").map((t) => t.error ?? ""),
          ))
        }; a score over the ${result.episodes} left would not be the model's.`,
    );
  }
  await run.log.evaluation({ phase, step, time: new Date().toISOString(), ...result });
  await run.log.rollouts(`eval-${phase}`, step, trajectories, run.host.tokenizer);
  return result;
}
