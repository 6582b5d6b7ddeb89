/**
 * DPO after the warm start, in rounds (round_phase.ts): on the pairs of data.preferences (algorithm.learner dpo, one
 * round), or ETO's (algorithm.learner eto, eto.iterations rounds): explore the round's train tasks with the newest
 * weights, pair each task's expert trajectory (the task's oracle, or eto.expert's file) with its lowest-rewarded
 * explored one by AgentGym's rule (src/rl/dpo.ts `preferred`: reward gap and threshold, the better one chosen either
 * way), write the pairs (pairs/round-N.trl.jsonl and .agentgym.jsonl), measure the reference's log-probabilities on
 * the round's starting weights once, and train DPO on them with a fresh optimizer, as ETO's script does each
 * iteration. Per round one `dpo_round` line in metrics.jsonl; per optimizer step one `dpo` line with TRL's metrics.
 */
import { learnerOf } from "../config/schema.ts";
import { type PairRule, preferred } from "../rl/dpo.ts";
import { lrAt } from "../rl/schedule.ts";
import { ChatRenderer } from "../rollout/chat.ts";
import { trainable, type Trajectory } from "../rollout/trajectory.ts";
import {
  dpoStep,
  type DpoUpdateSettings,
  pairLogps,
  type PreferencePair,
  type ReferencedPair,
} from "../update/dpo_update.ts";
import { SkipGuard } from "../update/learner.ts";
import type { AdamW } from "../update/optimizer.ts";
import type { TrainSequence } from "../update/sequences.ts";
import { Rng } from "../util/random.ts";
import { explore, roundTasks } from "./explore.ts";
import {
  episodeTurns,
  formatPreferences,
  pairSequences,
  type PairTurn,
  renderTurns,
  type TextPair,
} from "./preferences.ts";
import { type RoundLearner, roundOptimizer } from "./round_phase.ts";
import { oracleEpisodes } from "./sft_data.ts";
import type { Run } from "./types.ts";

/** A round's pairs with their reference log-probabilities (kept in mid-round checkpoints). */
export interface DpoRound {
  pairs: ReferencedPair[];
}

/** The DPO settings of a run. */
export function dpoSettings(run: Run): DpoUpdateSettings {
  const d = run.config.dpo;
  return {
    beta: d.beta,
    lossType: d.loss_type,
    labelSmoothing: d.label_smoothing,
    microBatchTokens: run.config.actor.ppo_micro_batch_tokens,
  };
}

/** The optimizer steps of a round: epochs over the pairs, each shuffled from (seed, round, epoch), cut in batches. */
export function dpoPlan(pairs: number, o: { epochs: number; batchPairs: number; seed: number; round: number }) {
  const steps: { epoch: number; pairs: number[] }[] = [];
  for (let e = 0; e < Math.ceil(o.epochs); e++) {
    const order = new Rng(o.seed * 7919 + o.round * 1009 + e).shuffle([...Array(pairs).keys()]);
    const taken = e + 1 <= o.epochs ? order : order.slice(0, Math.round(pairs * (o.epochs - e)));
    for (let i = 0; i < taken.length; i += o.batchPairs) {
      steps.push({ epoch: e, pairs: taken.slice(i, i + o.batchPairs) });
    }
  }
  return steps;
}

/** DPO's learner: one round on data.preferences, or eto.iterations rounds of ETO. */
export function dpoLearner(run: Run): RoundLearner<DpoRound> {
  const c = run.config, eto = learnerOf(c) === "eto";
  return {
    phase: "dpo",
    rounds: eto ? c.eto.iterations : 1,
    async prepare(run, round) {
      const made = eto ? await etoPairs(run, round) : { pairs: filePairs(run), line: {} };
      const t0 = performance.now();
      const ref = made.pairs.length > 0 ? await pairLogps(run.learner, made.pairs, dpoSettings(run)) : undefined;
      const pairs = made.pairs.map((p, i) => ({ ...p, refChosen: ref!.chosen[i], refRejected: ref!.rejected[i] }));
      await run.log.metric({
        phase: "dpo_round",
        step: run.state.round!.steps,
        round,
        time: new Date().toISOString(),
        pairs: pairs.length,
        ...made.line,
        time_reference_s: (performance.now() - t0) / 1000,
      });
      run.rep.line(`Round ${round}: ${pairs.length} preference pairs${eto ? "" : ` from ${c.data.preferences}`}`);
      return { pairs };
    },
    train: trainDpo,
  };
}

/** data.preferences' pairs as sequences in the run's chat layout. */
function filePairs(run: Run): PreferencePair[] {
  const { tokenizer, stopIds } = run.host, task = run.env.task;
  const chat = new ChatRenderer(tokenizer, task.tools?.bind(task));
  return (run.inputs.preferences ?? []).map((p) => pairSequences(p, { tokenizer, stopId: stopIds[0], chat }));
}

/** A task's expert episode: its reward, its turns as text, and its tokens when it was played here (the oracle). */
interface Expert {
  reward: number;
  turns: PairTurn[];
  sequence?: TrainSequence;
}

/** The expert episodes of `tasks`: the oracle's played now, or eto.expert's file's; a task without one is left out. */
async function experts(run: Run, tasks: number[]): Promise<Map<number, Expert>> {
  const c = run.config, out = new Map<number, Expert>();
  if (c.eto.expert !== "oracle") {
    for (const t of tasks) {
      const e = run.inputs.experts?.get(t);
      if (e) out.set(t, { reward: e.reward, turns: e.turns });
    }
    return out;
  }
  const { task, options, client } = run.env;
  const played = await oracleEpisodes(
    { tokenizer: run.host.tokenizer, client, task, stopId: run.host.stopIds[0] },
    tasks,
    {
      options,
      maxPromptLength: c.rollout.max_prompt_length,
      maxResponseLength: c.rollout.max_response_length,
      retries: c.env.episode_retries,
    },
  );
  for (const t of played) out.set(t.task, { reward: t.reward ?? 1, turns: episodeTurns(t), sequence: sequenceOf(t) });
  return out;
}

/** A sequence cut after its first `turns` agent turns (runs of mask 1); the whole of it when it has no more. */
export function firstTurns(s: TrainSequence, turns: number): TrainSequence {
  let seen = 0;
  for (let j = 0; j < s.mask.length; j++) {
    const ends = s.mask[j] === 1 && (j + 1 === s.mask.length || s.mask[j + 1] !== 1);
    if (ends && ++seen === turns) {
      const cut = j + 1;
      const ignore = s.ignore ? { ignore: s.ignore.slice(0, cut) } : {};
      return {
        ids: s.ids.slice(0, s.promptLength + cut),
        promptLength: s.promptLength,
        mask: s.mask.slice(0, cut),
        ...ignore,
      };
    }
  }
  return s;
}

function sequenceOf(t: Trajectory): TrainSequence {
  return { ids: [...t.promptIds, ...t.responseIds], promptLength: t.promptIds.length, mask: t.mask };
}

/** ETO's pairs of a round: explore, take each task's lowest-rewarded episode, pair it with the expert's. */
async function etoPairs(run: Run, round: number) {
  const c = run.config, task = run.env.task;
  const tasks = roundTasks(run, c.eto.tasks);
  const explored = await explore(run, round, { tasks, samples: c.eto.samples });
  const expert = await experts(run, tasks);
  // make_dpo_dataset.py keeps, of a task's explored episodes, the one with the lowest reward.
  const worst = new Map<number, Trajectory>();
  for (const t of explored.trajectories.filter(trainable)) {
    const w = worst.get(t.task);
    if (!w || t.reward! < w.reward!) worst.set(t.task, t);
  }
  const rule: PairRule = { rewardGap: c.eto.reward_gap, expertThreshold: c.eto.expert_threshold };
  const chat = new ChatRenderer(run.host.tokenizer, task.tools?.bind(task));
  const pairs: PreferencePair[] = [], text: TextPair[] = [];
  let expertChosen = 0, noPair = 0;
  for (const i of tasks) {
    const e = expert.get(i), x = worst.get(i);
    if (!e || !x) continue;
    const side = preferred(e.reward, x.reward!, rule);
    if (!side) {
      noPair++;
      continue;
    }
    // ETO cuts a rejected explored episode after the expert's turns plus eto.extra_turns.
    const keep = side === "expert" && c.eto.extra_turns !== null
      ? e.turns.filter((t) => t.role === "assistant").length + c.eto.extra_turns
      : Infinity;
    const mine = firstTurns(sequenceOf(x), keep);
    const theirs = e.sequence ?? renderTurns(chat, x.promptIds, e.turns, run.host.stopIds[0]);
    const turns = episodeTurns(x).slice(0, 2 * keep - 1);
    const opening = { user: task.prompt.user, assistant: task.prompt.assistant, observation: x.firstObservation };
    if (side === "expert") expertChosen++;
    pairs.push(side === "expert" ? { chosen: theirs, rejected: mine } : { chosen: mine, rejected: theirs });
    text.push({
      id: i,
      opening,
      chosen: side === "expert" ? e.turns : turns,
      rejected: side === "expert" ? turns : e.turns,
    });
  }
  await Deno.mkdir(`${run.dir}/pairs`, { recursive: true });
  for (const format of ["trl", "agentgym"] as const) {
    await Deno.writeTextFile(`${run.dir}/pairs/round-${round}.${format}.jsonl`, formatPreferences(text, format));
  }
  return {
    pairs,
    line: {
      tasks: tasks.length,
      episodes: explored.result.episodes,
      explore_success_rate: explored.result.avg,
      explore_reward_mean: explored.result.meanReward,
      experts: expert.size,
      expert_chosen: expertChosen,
      explored_chosen: pairs.length - expertChosen,
      no_pair: noPair,
      time_explore_s: explored.seconds,
    },
  };
}

/** Trains a round's DPO steps from state.round.step on, with a fresh optimizer (or the resumed round's moments). */
async function trainDpo(
  run: Run,
  data: DpoRound,
  o: Parameters<RoundLearner<DpoRound>["train"]>[2],
): Promise<{ finished: boolean; opt: AdamW }> {
  const c = run.config, round = run.state.round!;
  const opt = roundOptimizer(run, "dpo", { weightDecay: c.dpo.weight_decay, maxGradNorm: c.dpo.grad_clip });
  const plan = dpoPlan(data.pairs.length, {
    epochs: c.dpo.epochs,
    batchPairs: c.dpo.batch_pairs,
    seed: c.trainer.seed,
    round: round.index,
  });
  const bar = run.rep.bar(`dpo ${round.index}`, plan.length);
  bar.tick(round.step);
  const guard = new SkipGuard(c.trainer.max_skipped_steps, "dpo.lr", c.dpo.lr);
  const settings = dpoSettings(run);
  while (round.step < plan.length) {
    if (o.stop()) return { finished: false, opt };
    const k = round.step, pairs = plan[k].pairs.map((i) => data.pairs[i]), t0 = performance.now();
    const s = await dpoStep(run.learner, opt, {
      pairs,
      settings,
      lr: (n) => lrAt(c.dpo.lr, c.dpo.lr_schedule, n, plan.length),
    });
    await run.log.metric({
      phase: "dpo",
      step: round.steps + k + 1,
      round: round.index,
      epoch: plan[k].epoch,
      time: new Date().toISOString(),
      ...s,
      time_update_s: (performance.now() - t0) / 1000,
    });
    bar.tick(1, `loss ${s.loss.toFixed(3)} acc ${(100 * s["rewards/accuracies"]).toFixed(0)}%`);
    if (guard.record(s.applied)) {
      await o.afterStep(opt);
      throw guard.error("Resume from the latest checkpoint with a lower dpo.lr.");
    }
    await o.afterStep(opt);
  }
  bar.done();
  return { finished: true, opt };
}
