/**
 * Direct preference optimisation on plain arrays: TRL's DPO losses over pairs of log-probabilities (a preferred,
 * "chosen", trajectory and a dispreferred, "rejected", one that share a prompt), their gradient, the metrics TRL logs,
 * and AgentGym's rule (make_dpo_dataset.py) for which of an expert trajectory and an explored one is preferred.
 *
 * With z = (π_c − π_r) − (ref_c − ref_r) for a pair's log-probabilities under the policy (π) and the frozen reference:
 * - `sigmoid` (DPO, with label smoothing ε as in cDPO): −(1 − ε) log σ(βz) − ε log σ(−βz);
 * - `ipo`: (z − 1 / 2β)²;
 * - `hinge` (RSO): max(0, 1 − βz).
 * A pair's implicit rewards are β(π_c − ref_c) and β(π_r − ref_r). The GPU computes the same loss inside the model's
 * head pass (src/ops/dpo_loss.ts), checked against this module.
 */

/** TRL's DPO loss types that Crucible trains with. */
export const DPO_LOSS_TYPES = ["sigmoid", "ipo", "hinge"] as const;

/** One of {@linkcode DPO_LOSS_TYPES}. */
export type DpoLossType = typeof DPO_LOSS_TYPES[number];

/**
 * Whether a loss type scores a trajectory by the mean of its trained tokens' log-probabilities instead of their sum:
 * TRL averages for IPO (its paper's length-normalised log-likelihoods) and sums for the others.
 */
export function meanLogps(lossType: DpoLossType): boolean {
  return lossType === "ipo";
}

/** Log-probabilities of P pairs: arrays of length P, each entry one trajectory's (summed) log-probability. */
export interface DpoPairs {
  /** The policy's log-probability of each preferred trajectory. */
  chosen: ArrayLike<number>;
  /** The policy's log-probability of each dispreferred trajectory. */
  rejected: ArrayLike<number>;
  /** The frozen reference's log-probability of each preferred trajectory. */
  refChosen: ArrayLike<number>;
  /** The frozen reference's log-probability of each dispreferred trajectory. */
  refRejected: ArrayLike<number>;
}

/** Options of {@linkcode dpoLoss}. */
export interface DpoOptions {
  /** β, the inverse temperature of the implicit reward (default 0.1, TRL's). */
  beta?: number;
  /** sigmoid (default), ipo or hinge. */
  lossType?: DpoLossType;
  /** cDPO's ε: the probability that a pair's preference is flipped; sigmoid only (default 0). */
  labelSmoothing?: number;
}

/** Per pair: the loss and the two implicit rewards. */
export interface DpoLosses {
  /** Each pair's loss. */
  losses: number[];
  /** β times the policy's minus the reference's log-probability of each chosen trajectory. */
  chosenRewards: number[];
  /** The same of each rejected trajectory. */
  rejectedRewards: number[];
}

/** The options with their defaults, checked. */
export function dpoSettings(o: DpoOptions = {}): Required<DpoOptions> {
  const s = { beta: o.beta ?? 0.1, lossType: o.lossType ?? "sigmoid", labelSmoothing: o.labelSmoothing ?? 0 };
  if (!(s.beta > 0) || !Number.isFinite(s.beta)) throw new RangeError(`DPO's beta must be > 0, got ${s.beta}`);
  if (!DPO_LOSS_TYPES.includes(s.lossType)) {
    throw new RangeError(`Unknown DPO loss type "${s.lossType}": use one of ${DPO_LOSS_TYPES.join(", ")}`);
  }
  if (!(s.labelSmoothing >= 0 && s.labelSmoothing < 0.5)) {
    throw new RangeError(`DPO's label smoothing must be in [0, 0.5), got ${s.labelSmoothing}`);
  }
  if (s.labelSmoothing > 0 && s.lossType !== "sigmoid") {
    throw new RangeError(`DPO's label smoothing applies to the sigmoid loss only, not ${s.lossType}; set it to 0`);
  }
  return s;
}

/** log σ(x) without overflow. */
function logSigmoid(x: number): number {
  return x < 0 ? x - Math.log1p(Math.exp(x)) : -Math.log1p(Math.exp(-x));
}

function sigmoid(x: number): number {
  return x < 0 ? Math.exp(x) / (1 + Math.exp(x)) : 1 / (1 + Math.exp(-x));
}

function checkPairs(p: DpoPairs): number {
  const n = p.chosen.length;
  for (const [name, a] of Object.entries(p)) {
    if (a.length !== n) throw new TypeError(`dpoLoss: ${name} has ${a.length} values, chosen has ${n}`);
  }
  return n;
}

/** z = (π_c − π_r) − (ref_c − ref_r) of pair i. */
function logit(p: DpoPairs, i: number): number {
  return (p.chosen[i] - p.rejected[i]) - (p.refChosen[i] - p.refRejected[i]);
}

/**
 * TRL's DPO loss of each pair, with its implicit rewards.
 *
 * @example
 * ```ts
 * import { dpoLoss } from "./mod.ts";
 * const r = dpoLoss({ chosen: [-10], rejected: [-12], refChosen: [-11], refRejected: [-11] });
 * r.losses; // [0.5981]: -log σ(0.1 · 2)
 * r.chosenRewards; // [0.1]
 * r.rejectedRewards; // [-0.1]
 * ```
 */
export function dpoLoss(pairs: DpoPairs, options: DpoOptions = {}): DpoLosses {
  const s = dpoSettings(options), n = checkPairs(pairs), b = s.beta, eps = s.labelSmoothing;
  const losses = Array.from({ length: n }, (_, i) => {
    const z = logit(pairs, i);
    if (s.lossType === "ipo") return (z - 1 / (2 * b)) ** 2;
    if (s.lossType === "hinge") return Math.max(0, 1 - b * z);
    return -(1 - eps) * logSigmoid(b * z) - eps * logSigmoid(-b * z);
  });
  return {
    losses,
    chosenRewards: Array.from({ length: n }, (_, i) => b * (pairs.chosen[i] - pairs.refChosen[i])),
    rejectedRewards: Array.from({ length: n }, (_, i) => b * (pairs.rejected[i] - pairs.refRejected[i])),
  };
}

/**
 * d loss_i / d z_i of each pair (so d loss_i / d π_c = that, d loss_i / d π_r = minus that). At the hinge's kink
 * (βz = 1) the gradient is 0, as PyTorch's relu takes it.
 */
export function dpoLogitGrad(pairs: DpoPairs, options: DpoOptions = {}): number[] {
  const s = dpoSettings(options), n = checkPairs(pairs), b = s.beta, eps = s.labelSmoothing;
  return Array.from({ length: n }, (_, i) => {
    const z = logit(pairs, i);
    if (s.lossType === "ipo") return 2 * (z - 1 / (2 * b));
    if (s.lossType === "hinge") return 1 - b * z > 0 ? -b : 0;
    return -(1 - eps) * b * sigmoid(-b * z) + eps * b * sigmoid(b * z);
  });
}

/** TRL's logged DPO metrics, means over the pairs of a step. */
export interface DpoMetrics {
  /** The mean loss. */
  loss: number;
  /** The mean implicit reward of the chosen trajectories. */
  "rewards/chosen": number;
  /** The mean implicit reward of the rejected ones. */
  "rewards/rejected": number;
  /** Share of pairs whose chosen reward is above the rejected one's. */
  "rewards/accuracies": number;
  /** The mean of chosen minus rejected reward. */
  "rewards/margins": number;
}

/** The metrics TRL logs for a step's pairs (means over them); throws on no pairs, whose means are no numbers. */
export function dpoMetrics(r: DpoLosses): DpoMetrics {
  const n = r.losses.length;
  if (n === 0) throw new RangeError("DPO metrics need at least one pair");
  const mean = (f: (i: number) => number) => Array.from({ length: n }, (_, i) => f(i)).reduce((a, x) => a + x) / n;
  return {
    loss: mean((i) => r.losses[i]),
    "rewards/chosen": mean((i) => r.chosenRewards[i]),
    "rewards/rejected": mean((i) => r.rejectedRewards[i]),
    "rewards/accuracies": mean((i) => (r.chosenRewards[i] > r.rejectedRewards[i] ? 1 : 0)),
    "rewards/margins": mean((i) => r.chosenRewards[i] - r.rejectedRewards[i]),
  };
}

/** AgentGym's thresholds for pairing an expert trajectory with an explored one (make_dpo_dataset.py's defaults). */
export interface PairRule {
  /** The rewards must differ by at least this (default 0.01). */
  rewardGap: number;
  /** The better of the two must reach at least this reward (default 0.7). */
  expertThreshold: number;
}

/**
 * Which of an expert trajectory and an explored one is preferred (AgentGym's make_dpo_dataset.py): the expert when its
 * reward beats the explored one's by `rewardGap` and reaches `expertThreshold`, the explored one under the same rule
 * the other way, else neither (no pair).
 *
 * @example
 * ```ts
 * preferred(1, 0, { rewardGap: 0.01, expertThreshold: 0.7 }); // "expert"
 * preferred(0.5, 0.9, { rewardGap: 0.01, expertThreshold: 0.7 }); // "explored"
 * preferred(0.6, 0.1, { rewardGap: 0.01, expertThreshold: 0.7 }); // undefined: the better one is under 0.7
 * ```
 */
export function preferred(expert: number, explored: number, rule: PairRule): "expert" | "explored" | undefined {
  if (expert - explored >= rule.rewardGap && expert >= rule.expertThreshold) return "expert";
  if (explored - expert >= rule.rewardGap && explored >= rule.expertThreshold) return "explored";
  return undefined;
}
