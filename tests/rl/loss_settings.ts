/**
 * The actor's loss as a run resolves it from the config's defaults (src/config/schema.ts, their one home), with the
 * settings a test changes: tests name only what they vary, as a config file does.
 */
import { RunConfig } from "../../src/config/schema.ts";
import { type PolicyLossSettings, type ResolvedPolicyLoss, resolvePolicyLoss } from "../../src/rl/policy_loss.ts";
import { actorLoss } from "../../src/train/rl_step.ts";

/** The schema's loss settings, with a reference policy (the KL term on). */
export const DEFAULT_LOSS: Readonly<PolicyLossSettings> = actorLoss(RunConfig.parse({}), true).settings;

/** The schema's clip settings. */
export const DEFAULT_CLIP = {
  clipLow: DEFAULT_LOSS.clipLow,
  clipHigh: DEFAULT_LOSS.clipHigh,
  clipC: DEFAULT_LOSS.clipC,
} as const;

/** The default loss with `changed` settings, resolved. */
export function lossOf(changed: Partial<PolicyLossSettings> = {}): ResolvedPolicyLoss {
  return resolvePolicyLoss({ ...DEFAULT_LOSS, ...changed });
}
