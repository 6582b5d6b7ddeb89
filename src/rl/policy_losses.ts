/**
 * The policy losses by name (config `actor.policy_loss`), one entry each with the config keys it reads: the
 * per-token surrogate the actor minimises, beside the KL and entropy terms every loss shares (policy_loss.ts). An
 * entry pairs the surrogate's definition on plain numbers (`term`, which policyObjective computes and the tests hold
 * the GPU to) with its GPU side (`kernel`), which stays beside its shader in src/ops; the update's head
 * (src/update/policy_head.ts) runs the configured loss's kernel. A new loss is one entry: its term and its kernel,
 * with their tests, and its line in the table below (or `POLICY_LOSSES.register(...)`); docs/extending-rl.md.
 */
import { policyLossForward, type PolicyLossKernel } from "../ops/policy_loss.ts";
import { type Registered, Registry } from "./registry.ts";
import { type ClipSettings, type SurrogateTerm, surrogateTerm } from "./surrogate.ts";

/** One policy loss. */
export interface PolicyLoss extends Registered {
  /**
   * One token's surrogate: its loss, d loss / d logp, the ratio ρ and the clip flags the metrics count, from the
   * token's log-probabilities now (`logp`) and at sampling (`oldLogp`) and its advantage.
   */
  term(logp: number, oldLogp: number, advantage: number, clip: ClipSettings): SurrogateTerm;
  /** The GPU side: records the fused per-token loss of a packed batch with this surrogate (src/ops). */
  kernel: PolicyLossKernel;
}

/** Every policy loss, by name: the built-in one, and any registered since. */
export const POLICY_LOSSES: Registry<PolicyLoss> = new Registry<PolicyLoss>("policy loss", "actor.policy_loss", [
  {
    name: "vanilla",
    summary: "PPO's clipped ratio with dual clip for negative advantages (verl's vanilla loss)",
    keys: ["actor.clip_ratio_low", "actor.clip_ratio_high", "actor.clip_ratio_c"],
    term: surrogateTerm,
    kernel: policyLossForward,
  },
]);

/**
 * The policy loss called `name`; a RangeError naming the registered ones otherwise.
 *
 * @example
 * ```ts
 * policyLoss("vanilla").term(Math.log(1.5), 0, 1, {}).loss; // −1.2: ρ = 1.5 clipped at 1 + 0.2
 * ```
 */
export function policyLoss(name: string): PolicyLoss {
  return POLICY_LOSSES.get(name);
}
