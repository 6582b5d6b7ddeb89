/**
 * TextCraft: craft a Minecraft item from a short list of crafting commands. The task's rules (rules.ts) and its
 * training aids, which the trainer reaches only through the Task hooks: Crucible's embedded server, the oracle's
 * demonstrations in several reply layouts, per-epoch renaming and a distractor curriculum, the built-in tiny
 * model's vocabulary, synthetic worlds for pretraining (worlds.ts) with their words on a base model's card
 * (card.ts), fresh worlds among RL's prompts (rl_worlds.ts), and what identifies a game state for GiGPO (anchor.ts).
 */
import { textcraftAdapter } from "../../src/env/adapters/textcraft.ts";
import { textCraftAnchor } from "./anchor.ts";
import { serveTextCraft, textCraftHandler } from "./game/server.ts";
import type { ServedGame } from "../../src/env/server/serve.ts";
import { CraftingTree } from "./game/tree.ts";
import { type Task, type TaskOptions, upstreamSuccess } from "../../src/task/task.ts";
import { textCraftAugment } from "./augment.ts";
import { textCraftCardWords } from "./card.ts";
import { demoReplies, tagMembers } from "./demos.ts";
import { stackFrames } from "./formats.ts";
import { parseTextCraftOptions } from "./options.ts";
import { depthOf, parseTextCraftAction, TEXTCRAFT_PROMPT, TEXTCRAFT_SPLITS } from "./rules.ts";
import { textCraftRlWorlds } from "./rl_worlds.ts";
import { type RewardShaping, shapedGame, shapingOn } from "./shaping.ts";
import { TextCraftGame } from "./game/game.ts";
import type { TextCraftOptions } from "./options.ts";
import { textCraftSynthetic } from "./synthetic.ts";
import { textCraftVocabulary } from "./vocabulary.ts";
import { idToName } from "./game/python.ts";

export { DEPTH_RANGES, parseTextCraftAction, TEXTCRAFT_PROMPT, TEXTCRAFT_SPLITS } from "./rules.ts";

/** The TextCraft task. Max rounds 30, as AgentGym-RL trains and evaluates it. */
export const textcraft: Task = {
  name: "textcraft",
  adapter: textcraftAdapter,
  prompt: TEXTCRAFT_PROMPT,
  parseAction: parseTextCraftAction,
  isSuccess: upstreamSuccess,
  maxRounds: 30,
  // A step's reward is 1 on the step that crafts the goal, else 0.
  rewardRange: () => [0, 1],
  splits: TEXTCRAFT_SPLITS,
  category: (index) => {
    const depth = depthOf(index);
    return depth === 0 ? "unknown" : `depth ${depth}`;
  },
  parseOptions: parseTextCraftOptions,
  async serve(options, at = { port: 0 }) {
    const source = await gamesOf(options);
    return await serveTextCraft(source instanceof CraftingTree ? { ...at, tree: source } : { ...at, games: source });
  },
  handler: async (options) => textCraftHandler(await gamesOf(options)),
  // The shaped rewards are the embedded server's; an external server pays upstream's.
  embeddedOnly: (options) => {
    const o = parseTextCraftOptions(options);
    return (["progress_reward", "repeat_penalty"] as const).filter((k) => o[k] > 0);
  },
  vocabulary: async (prompt) => textCraftVocabulary(await CraftingTree.load(), prompt),
  oracle: async (index, options) => {
    const o = parseTextCraftOptions(options);
    return demoReplies(await CraftingTree.load(), index, { format: o.oracle_format, craftCount: o.craft_count });
  },
  augment: (options) => textCraftAugment(parseTextCraftOptions(options)),
  synthetic: async (options) => {
    const o = parseTextCraftOptions(options);
    return textCraftSynthetic([...(await CraftingTree.load()).items].map(idToName), {
      frames: stackFrames(o.oracle_format),
      craftCount: o.craft_count,
      misreads: o.synthetic_misreads,
      skippedPushes: o.synthetic_skipped_pushes,
    });
  },
  rlWorlds: async (options, o) => {
    const t = parseTextCraftOptions(options);
    return textCraftRlWorlds(await CraftingTree.load(), t.rl_world_depths, o, shapingOf(t));
  },
  baseModelWords: textCraftCardWords,
  // The inventory, replayed from the game's answers: the observation alone does not tell states apart (anchor.ts).
  anchor: textCraftAnchor,
};

/** The embedded server's games: TextCraft's own over the tree, or with the shaped rewards the options ask for. */
async function gamesOf(options: TaskOptions): Promise<CraftingTree | (() => ServedGame)> {
  const tree = await CraftingTree.load();
  const shaping = shapingOf(parseTextCraftOptions(options));
  if (!shapingOn(shaping)) return tree;
  const members = tagMembers(tree);
  return () => shapedGame(new TextCraftGame(tree), shaping, members);
}

/** The reward shaping TextCraft's options ask for (shaping.ts). */
function shapingOf(o: TextCraftOptions): RewardShaping {
  return { progress: o.progress_reward, repeatPenalty: o.repeat_penalty };
}
