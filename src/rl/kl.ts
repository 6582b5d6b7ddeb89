/**
 * The KL estimators of the actor's KL loss against the reference policy, by name (config `actor.kl_loss_type`; verl's
 * names and aliases), one entry each: its value and derivative on plain numbers, and the branch of the GPU kernel that
 * computes the same (src/ops/policy_loss.ts's KL_CODES). A trailing `+` on any name is straight-through: the
 * estimator's value with k2's gradient. The config refuses a name no entry has, `deno task config --algorithms` lists
 * them, and the actor's loss (policy_loss.ts) looks its estimator up here once per RL step.
 */
import { KL_CODES } from "../ops/policy_loss.ts";
import { type Registered, Registry } from "./registry.ts";

/** One KL estimator, of d = logp − refLogp. */
export interface KlEstimator extends Registered {
  /** The GPU kernel's branch that computes it (KL_CODES). */
  readonly code: number;
  /** The estimate at d and its derivative with respect to logp: [value, d value / d logp]. */
  term(d: number): [number, number];
}

const KEYS = ["actor.kl_loss_coef"];

const k1 = (d: number): [number, number] => [d, 1];
const abs = (d: number): [number, number] => [Math.abs(d), Math.sign(d)];
const k2 = (d: number): [number, number] => [0.5 * d * d, d];
/** k3 = clamp(e^u − u − 1, −10, 10) with u = clamp(−d, −20, 20); zero gradient where a clamp holds. */
function k3(d: number): [number, number] {
  const u = Math.min(20, Math.max(-20, -d));
  const k = Math.exp(u) - u - 1;
  // du/dlogp = −1 inside the inner clamp; dk/du = e^u − 1; the outer clamp passes k ≤ 10 (k ≥ 0 always).
  return [Math.min(10, Math.max(-10, k)), Math.abs(d) <= 20 && k <= 10 ? 1 - Math.exp(u) : 0];
}

/** Every KL estimator, by name: the built-in ones (verl's names and aliases), and any registered since. */
export const KL_ESTIMATORS: Registry<KlEstimator> = new Registry<KlEstimator>("KL estimator", "actor.kl_loss_type", [
  {
    name: "k1",
    summary: "k1 = d, the log-ratio itself (unbiased, high variance)",
    keys: KEYS,
    code: KL_CODES.k1,
    term: k1,
  },
  { name: "kl", summary: "k1 under verl's other name", keys: KEYS, code: KL_CODES.k1, term: k1 },
  { name: "abs", summary: "|d|", keys: KEYS, code: KL_CODES.abs, term: abs },
  { name: "k2", summary: "k2 = d²/2", keys: KEYS, code: KL_CODES.k2, term: k2 },
  { name: "mse", summary: "k2 under verl's other name", keys: KEYS, code: KL_CODES.k2, term: k2 },
  {
    name: "k3",
    summary: "k3 = e^−d + d − 1, clamped (Schulman's low-variance estimator)",
    keys: KEYS,
    code: KL_CODES.k3,
    term: k3,
  },
  { name: "low_var_kl", summary: "k3 under verl's other name", keys: KEYS, code: KL_CODES.k3, term: k3 },
]);

/** A KL kind: a registered estimator's name, with a trailing `+` for its straight-through form. */
export type KlKind = string;

/** The estimator a kind names and whether it is straight-through; a RangeError naming the registered ones otherwise. */
export function klEstimator(kind: KlKind): { estimator: KlEstimator; straightThrough: boolean } {
  const straightThrough = kind.endsWith("+");
  return { estimator: KL_ESTIMATORS.get(straightThrough ? kind.slice(0, -1) : kind), straightThrough };
}

/** Whether `kind` names a registered estimator (with or without `+`). */
export function isKlKind(kind: string): boolean {
  return KL_ESTIMATORS.has(kind.endsWith("+") ? kind.slice(0, -1) : kind);
}

/** The KL estimate of one token and its derivative with respect to logp, [value, d value / d logp]. */
export function klTerm(logp: number, refLogp: number, kind: KlKind): [number, number] {
  const { estimator, straightThrough } = klEstimator(kind);
  const d = logp - refLogp;
  const [value, grad] = estimator.term(d);
  return [value, straightThrough ? d : grad];
}

/**
 * Per-token KL penalty of the current log-probabilities against the reference.
 *
 * @example
 * ```ts
 * klPenalty([-1.5], [-1], "low_var_kl"); // [e^0.5 − 1.5] ≈ [0.1487]
 * ```
 */
export function klPenalty(logp: ArrayLike<number>, refLogp: ArrayLike<number>, kind: KlKind): number[] {
  if (logp.length !== refLogp.length) throw new TypeError(`klPenalty: ${logp.length} logp but ${refLogp.length} ref`);
  return Array.from(logp, (l, t) => klTerm(l, refLogp[t], kind)[0]);
}

/** d klPenalty / d logp per token (for `+` kinds, the k2 gradient d). */
export function klPenaltyGrad(logp: ArrayLike<number>, refLogp: ArrayLike<number>, kind: KlKind): number[] {
  if (logp.length !== refLogp.length) {
    throw new TypeError(`klPenaltyGrad: ${logp.length} logp but ${refLogp.length} ref`);
  }
  return Array.from(logp, (l, t) => klTerm(l, refLogp[t], kind)[1]);
}
