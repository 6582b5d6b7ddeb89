/**
 * The learners that train in rounds after the warm start (DPO on a file: one round; ETO and AgentEvol: their
 * `iterations`), driven by one loop: each round prepares its data (exploration, pairs, reference log-probabilities),
 * trains on it, and ends with a checkpoint `<phase>-round-N` (and an evaluation every trainer.test_freq rounds);
 * after the last, the final evaluation and `final`. Mid-round checkpoints (every trainer.save_freq optimizer steps)
 * keep the round's data beside the weights (ROUND_FILE), so a resumed run goes on with the same data and the same
 * optimizer state, bit for bit; a run resumed at a round's start prepares it again from the same weights and seeds.
 */
import { checkpointName, tidyCheckpoints } from "./checkpoint.ts";
import { coverage } from "./eval.ts";
import { evaluateOrStop } from "./phases.ts";
import type { AdamW } from "../update/optimizer.ts";
import { phaseOptimizer } from "../update/learner.ts";
import type { Run, TrainerState } from "./types.ts";

/** The JSON file a mid-round checkpoint keeps the round's data in. */
export const ROUND_FILE = "round.json";

/** One learner's rounds. `Data` must survive JSON (it is kept in mid-round checkpoints). */
export interface RoundLearner<Data> {
  /** The trainer-state phase and checkpoint prefix: "dpo" or "agentevol". */
  phase: "dpo" | "agentevol";
  /** How many rounds. */
  rounds: number;
  /** The round's data, made fresh at its start. */
  prepare(run: Run, round: number): Promise<Data>;
  /**
   * Trains the round from state.round.step on (a resumed round from where it stopped) with an optimizer of its own,
   * calling `afterStep` after each optimizer step and polling `stop` between steps; `finished` is false when a stop
   * ended it early.
   */
  train(
    run: Run,
    data: Data,
    o: { afterStep: (opt: AdamW) => Promise<void>; stop: () => boolean },
  ): Promise<{ finished: boolean; opt: AdamW }>;
}

/** Runs a learner's rounds from the state's round on; false when interrupted (a checkpoint is saved). */
export async function roundPhase<Data>(run: Run, l: RoundLearner<Data>): Promise<boolean> {
  const c = run.config, state = run.state;
  state.round ??= { index: 1, step: 0, steps: 0 };
  let resumed = run.resumed?.state.phase === l.phase ? run.resumed : undefined;
  const roundEnd = (index: number) => `${l.phase}-round-${index}`;
  while (state.round.index <= l.rounds) {
    if (run.stopRequested()) return false; // the latest checkpoint is the previous round's end
    const round: { index: number; step: number; steps: number } = state.round, index = round.index;
    // A checkpoint taken inside this round holds its data; otherwise the round starts afresh.
    const kept = resumed && round.step > 0
      ? JSON.parse(await Deno.readTextFile(`${resumed.dir}/${ROUND_FILE}`)) as Data
      : undefined;
    resumed = undefined;
    const data = kept ?? await l.prepare(run, index);
    const save = (opt: AdamW) =>
      run.save(opt, checkpointName(l.phase, round.steps + round.step), { [ROUND_FILE]: data });
    const r = await l.train(run, data, {
      afterStep: async (opt) => {
        round.step++;
        if (c.trainer.save_freq > 0 && round.step % c.trainer.save_freq === 0) {
          await save(opt);
          await tidyCheckpoints(run.dir, { prefix: l.phase });
        }
      },
      stop: () => run.stopRequested(),
    });
    if (!r.finished) {
      // Stopped before the round's first step: the latest checkpoint (the last round's end) holds the weights the
      // round explores with, which AgentEvol's reset to the base has since overwritten; it stays the one to resume.
      if (round.step > 0) {
        await save(r.opt);
        await tidyCheckpoints(run.dir, { prefix: l.phase });
      }
      r.opt.release();
      return false;
    }
    r.opt.release();
    state.round = { index: index + 1, step: 0, steps: round.steps + round.step };
    if (c.trainer.test_freq > 0 && index % c.trainer.test_freq === 0 && index < l.rounds) {
      const e = await evaluateOrStop(run, l.phase, state.round.steps, () => run.save(undefined, roundEnd(index)));
      run.rep.line(`After round ${index}: test success ${(100 * e.avg).toFixed(1)}% ${coverage(e)}`);
    }
    await run.save(undefined, roundEnd(index));
    await tidyCheckpoints(run.dir, { prefix: l.phase });
  }
  const last = roundEnd(l.rounds);
  state.notes.finalEval = await evaluateOrStop(run, "final", state.round.steps, () => run.save(undefined, last));
  await run.save(undefined, "final");
  return true;
}

/**
 * A round learner's optimizer (`weightDecay` and `maxGradNorm` from its section): fresh, or with the moments of a
 * mid-round checkpoint of its `phase` when the round had begun (a resumed run).
 */
export function roundOptimizer(
  run: Run,
  phase: TrainerState["phase"],
  o: { weightDecay: number; maxGradNorm: number },
): AdamW {
  const opt = phaseOptimizer(run.learner, run.config, o);
  const r = run.resumed;
  if (run.state.round!.step > 0 && r?.moments && r.state.phase === phase) {
    opt.restore(r.moments.m, r.moments.v, r.state.optimizerStep);
  }
  return opt;
}
