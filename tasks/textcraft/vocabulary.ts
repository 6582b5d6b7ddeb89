/**
 * Everything TextCraft says and accepts, as text: each task's opening, the oracle's actions and what they get
 * back, an inventory check, and the failure messages of a few wrong moves (a craft before its inputs are in hand, a
 * get of a crafted item, an unknown command, a craft with a wrong input count). The built-in tiny model's word-level
 * vocabulary is built from it, so every word the game uses has a token.
 */
import { TextCraftGame } from "./game/game.ts";
import { solveTask } from "./oracle.ts";
import { idToName } from "./game/python.ts";
import type { CraftingTree } from "./game/tree.ts";
import type { Prompt, TaskVocabulary } from "../../src/task/task.ts";
import { oracleReply } from "./formats.ts";

/** Texts of every task (in task order), plus `extra` (prompts, reply formats). */
export function textCraftCorpus(tree: CraftingTree, extra: readonly string[] = []): string[] {
  const texts = [...extra];
  const game = new TextCraftGame(tree);
  tree.goals.forEach((goal, i) => {
    const opening = game.reset(BigInt(i));
    texts.push(opening);
    const first = opening.split("\n")[1] ?? "";
    // Wrong moves first: crafting before gathering, getting a crafted item, an unknown command.
    for (const wrong of [first, `get 1 ${idToName(goal.id)}`, "look around", "inventory"]) {
      texts.push(wrong, game.step(wrong).observation);
    }
    const actions = solveTask(tree, i).actions;
    actions.forEach((action, k) => {
      // Before the goal's craft, the same craft with its first input's count one short: TextCraft's answer to a
      // misread recipe ("Could not find a valid recipe for ItemTagWithCount(...)").
      if (k === actions.length - 1) {
        const wrong = action.replace(/ using (\d+) /, (_, n) => ` using ${Number(n) - 1} `);
        texts.push(wrong, game.step(wrong).observation);
      }
      texts.push(action, game.step(action).observation);
    });
    texts.push(game.step("inventory").observation);
  });
  return texts;
}

/**
 * The built-in tiny model's vocabulary for TextCraft: the corpus with the prompt and the reply layouts' words, and
 * every item and tag name as one token (the model copies names from the command list).
 */
export function textCraftVocabulary(tree: CraftingTree, prompt: Prompt): TaskVocabulary {
  // " x2": how tail frames count crafts still to make (stack.ts). "using" alone: the count phrases take every
  // `using N` of the corpus, but a count of 10 or more (or a reply cut short) still writes the word by itself.
  const extra = [
    prompt.user,
    prompt.assistant,
    oracleReply("inventory", "thought"),
    "Action: inventory",
    " x2",
    "using",
  ];
  // Every item's id as a craft reports it (`Crafted 1 minecraft:oak_planks`): synthetic worlds craft any item.
  extra.push([...tree.items].join(" "));
  const names = [...tree.items, ...tree.tags].map(idToName);
  return { corpus: textCraftCorpus(tree, extra), phrases: [...names, ...COUNT_PHRASES] };
}

/**
 * A recipe input's count with the word before it, as one token each (`using 9`, `, 9`): in a command list the count
 * then follows the name before it (`craft 1 X using 9 Y, 1 Z`: X, ` using 9`, Y, `, 1`, Z), so copying a line is a
 * chain of one-token lookups, each keyed by a name. Written apart, the count follows `using` or `,`, which every line
 * has, and only the two tokens before it find its line: a two-layer model did not learn that key in 1,400 steps of
 * drills (docs/notes/2026-11-base-model-runs.md). A count of 10 or more stays digit by digit (the phrase must end the
 * number).
 */
export const COUNT_PHRASES: readonly string[] = Array.from({ length: 10 }, (_, n) => [`using ${n}`, `, ${n}`]).flat();
