/**
 * One-step-off rollouts in one process (rollout.max_staleness ≥ 1 without --cluster; verl's one-step-off recipe):
 * while the learner computes step t's update, a second copy of the policy, the sampler, plays step t+1's episodes.
 * The sampler lives on a GPU device of its own (a second WebGPU device on the same adapter): its own weights (with
 * LoRA, its own frozen base and adapter), KV cache, buffer pool and queue, so neither flow's submits wait behind the
 * other's (on one device, one queue runs both in submission order: measured slower than no overlap at all on
 * lavapipe). A new version reaches it through the host: one readback of the trained tensors (all of them, or the
 * adapter) on the learner's device, written into the sampler's.
 *
 * Versions: version v is the learner's weights after v RL steps, so step t starts at version t − 1. Step t+1's
 * episodes start as soon as step t's are in, on a copy of version t − 1 made before step t's update, and step t+1
 * trains on them at version t: one version behind, never more (rlStep's staleness bound would drop anything older).
 * The first step, and a step played again after the environment failed it, play at once on the current version.
 * Every trajectory carries its version, and the step's metrics say it (`rollout_version`).
 *
 * A checkpoint taken while step t+1's episodes play waits for them and keeps them (`rollouts_ahead.json`, beside
 * the trainer state, which keeps their prompts): a resumed run trains on the very episodes the uninterrupted run
 * did, so the resume is exact.
 */
import type { RunConfig } from "../config/schema.ts";
import { type Gpu, requestGpu } from "../gpu/device.ts";
import { writeStored } from "../gpu/split.ts";
import { Generator } from "../model/generate.ts";
import { loraTransformer } from "../model/lora_model.ts";
import { Transformer } from "../model/transformer.ts";
import type { TensorSet } from "../model/weights.ts";
import { type EpisodeSpec, type RolloutContext, type RolloutOptions, runRollouts } from "../rollout/agent.ts";
import type { Trajectory } from "../rollout/trajectory.ts";
import type { Learner } from "../update/learner.ts";
import type { PlayedStep, RolloutSource } from "./types.ts";

/** The file of a checkpoint that holds the episodes played ahead. */
export const AHEAD_FILE = "rollouts_ahead.json";

/** Episodes played ahead for a step, as a checkpoint keeps them. */
export interface AheadRecord {
  step: number;
  version: number;
  played: PlayedStep;
}

interface Pending {
  step: number;
  version: number;
  specs: readonly EpisodeSpec[];
  done: Promise<PlayedStep>;
}

/** The sampler: its device and model, the set a new version is written into, and its rollout context. */
interface Sampler {
  gpu: Gpu;
  model: Transformer;
  /** What a new version writes: the sampler's weights, or its adapter. */
  copy: TensorSet;
  /** The learner's tensors it comes from. */
  from: TensorSet;
  rollout: RolloutContext;
}

/** The in-process one-step-off rollout source of a run (see the module header). */
export class OneStepOff implements RolloutSource {
  /** Steps whose prompts the trainer draws ahead: one, whatever rollout.max_staleness ≥ 1 allows. */
  readonly ahead = 1;
  #sampler: Sampler;
  #version = -1;
  #next = new Map<number, { specs: readonly EpisodeSpec[]; o: RolloutOptions }>();
  #pending?: Pending;

  private constructor(readonly learner: Learner, sampler: Sampler, resumed?: AheadRecord) {
    this.#sampler = sampler;
    if (resumed) {
      const specs = resumed.played.trajectories.map((t) => ({ task: t.task, group: t.group, seed: t.seed }));
      this.#pending = { step: resumed.step, version: resumed.version, specs, done: Promise.resolve(resumed.played) };
    }
  }

  /**
   * A source over the learner and its host model (`base`: the weights it was loaded with, a LoRA run's frozen base);
   * `rollout` is the learner's rollout context (client, task, tokenizer), whose generator the sampler mirrors.
   */
  static async create(
    learner: Learner,
    o: { config: RunConfig; base: ReadonlyMap<string, Float32Array>; rollout: RolloutContext; resumed?: AheadRecord },
  ): Promise<OneStepOff> {
    const m = learner.model, gpu = await requestGpu({ tensorLimit: learner.gpu.tensorLimit });
    let model: Transformer, copy: TensorSet, from: TensorSet;
    if (m.lora) {
      from = m.lora.tensors;
      // The base as the learner holds it (f16 matrices where its own are); the adapter is written before any play.
      const f16 = [...m.weights.tensors.values()].some((t) => t.dtype === "f16");
      model = loraTransformer(gpu, m.config, o.base, {
        settings: m.lora.settings,
        adapter: await from.toHost(),
        baseDtype: f16 ? "f16" : "f32",
      });
      copy = model.lora!.tensors;
    } else {
      from = m.weights;
      model = Transformer.fromHost(gpu, m.config, await from.toHost());
      copy = model.weights;
    }
    const r = o.config.rollout;
    const generator = new Generator(model, {
      slots: r.slots,
      maxLen: r.max_prompt_length + r.max_response_length,
      blockSteps: r.block_steps,
      cache: r.kv_cache,
    });
    const sampler = { gpu, model, copy, from, rollout: { ...o.rollout, generator } };
    return new OneStepOff(learner, sampler, o.resumed);
  }

  /** Registers a later step's episodes; they start when the step before it has its own (see `play`). */
  prepare(step: number, specs: readonly EpisodeSpec[], o: RolloutOptions): Promise<void> {
    this.#next.set(step, { specs, o });
    return Promise.resolve();
  }

  /** Step `step`'s episodes (played ahead, or now), after starting the next step's on the current version. */
  async play(step: number, specs: readonly EpisodeSpec[], o: RolloutOptions): Promise<PlayedStep> {
    const p = this.#pending;
    this.#pending = undefined;
    let played: PlayedStep;
    if (p && p.step === step && sameSpecs(p.specs, specs)) {
      played = await p.done;
    } else {
      // Nothing (usable) played ahead: what runs ahead belongs to another attempt; it ends before the sampler changes.
      await p?.done.catch(() => {});
      await this.#sync(step - 1);
      played = await this.#play(specs, o);
    }
    const next = this.#next.get(step + 1);
    this.#next.clear();
    if (next) {
      // The learner holds version step − 1 until this step's update, which starts after this returns.
      await this.#sync(step - 1);
      const done = this.#play(next.specs, next.o);
      done.catch(() => {}); // awaited by the next step (or by close); a failure surfaces there
      this.#pending = { step: step + 1, version: step - 1, specs: next.specs, done };
    }
    return played;
  }

  /** The episodes played ahead, for a checkpoint (waits for them); undefined when none are. */
  async checkpoint(): Promise<Record<string, unknown> | undefined> {
    const p = this.#pending;
    if (!p) return undefined;
    const record: AheadRecord = { step: p.step, version: p.version, played: await p.done };
    return { [AHEAD_FILE]: record };
  }

  /** Waits for what plays ahead and gives the sampler's device back. */
  async close(): Promise<void> {
    await this.#pending?.done.catch(() => {});
    this.#pending = undefined;
    this.#sampler.gpu.device.destroy();
  }

  /**
   * Writes the learner's weights (or adapter) into the sampler, as version `version`, unless it holds it. SYNC POINT
   * on the learner's device (one readback); the sampler plays nothing meanwhile.
   */
  async #sync(version: number): Promise<void> {
    if (this.#version === version) return;
    const host = await this.#sampler.from.toHost();
    for (const [name, t] of this.#sampler.copy.tensors) writeStored(t, host.get(name)!);
    this.#version = version;
  }

  /** Plays episodes on the sampler at its current version; each trajectory carries the version. */
  async #play(specs: readonly EpisodeSpec[], o: RolloutOptions): Promise<PlayedStep> {
    const version = this.#version, ctx = this.#sampler.rollout;
    const g = ctx.generator as Generator, before = { ...g.timing };
    const timing = { envSeconds: 0 }, t0 = performance.now();
    const trajectories: Trajectory[] = await runRollouts(ctx, specs, { ...o, timing });
    for (const t of trajectories) t.version = version;
    return {
      trajectories,
      seconds: {
        prefill: g.timing.prefillSeconds - before.prefillSeconds,
        decode: g.timing.decodeSeconds - before.decodeSeconds,
        env: timing.envSeconds,
      },
      metrics: { rollout_version: version, rollout_play_s: (performance.now() - t0) / 1000 },
    };
  }
}

function sameSpecs(a: readonly EpisodeSpec[], b: readonly EpisodeSpec[]): boolean {
  return a.length === b.length &&
    a.every((s, i) => s.task === b[i].task && s.group === b[i].group && s.seed === b[i].seed);
}
