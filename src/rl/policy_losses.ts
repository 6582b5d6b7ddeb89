/**
 * The policy losses by name (config `actor.policy_loss`), one entry each with the config keys it reads: the
 * per-token surrogate the actor minimises, beside the KL and entropy terms every loss shares (policy_loss.ts). An
 * entry pairs the surrogate's definition on plain numbers (`term`, which policyObjective computes and the tests hold
 * the GPU to) with its GPU side (`kernel`), which stays beside its shader in src/ops; the update's head
 * (src/update/policy_head.ts) runs the configured loss's kernel. The shape of an entry (PolicyLoss) lives in
 * surrogate.ts. A new loss is one entry: its term in a file of its own (src/rl/<name>.ts) and its kernel beside its
 * shader (src/ops/<name>.ts), with their tests, and its line in the table below (or `POLICY_LOSSES.register(...)`);
 * docs/extending-rl.md.
 */
import { policyLossForward } from "../ops/policy_loss.ts";
import { Registry } from "./registry.ts";
import { type PolicyLoss, surrogateTerm } from "./surrogate.ts";

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
