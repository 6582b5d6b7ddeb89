/**
 * What learns after the warm start, by algorithm.learner's name (src/config/schema.ts LEARNERS): online RL's steps,
 * or the learners in rounds (DPO on a file, ETO, AgentEvol). run.ts looks the phase up here; each returns false
 * when a stop request interrupted it, after saving a checkpoint to resume from.
 */
import type { LearnerName } from "../config/schema.ts";
import { agentEvolLearner } from "./agentevol.ts";
import { dpoLearner } from "./dpo_phase.ts";
import { rlPhase } from "./phases.ts";
import { roundPhase } from "./round_phase.ts";
import type { Run } from "./types.ts";

/** Each learner's phase. */
export const LEARNER_PHASES: Readonly<Record<LearnerName, (run: Run) => Promise<boolean>>> = {
  rl: rlPhase,
  dpo: (run) => roundPhase(run, dpoLearner(run)),
  eto: (run) => roundPhase(run, dpoLearner(run)),
  agentevol: (run) => roundPhase(run, agentEvolLearner(run)),
};
