/**
 * Which training prompts an RL step plays (`data.prompt_sampling`).
 *
 * - "uniform" walks the train split in a shuffled order, reshuffled each epoch.
 * - "signal" is a curriculum by observed signal. A GRPO group whose episodes all earn the same reward has every
 *   advantage 0 and teaches nothing, yet costs its full rollout: in TextCraft's default run, depth-2 and deeper
 *   goals were 71% of the episodes and never once differed in reward. So each prompt's chance is its category's
 *   (the task's own grouping, TextCraft: crafting depth) share of groups that differed in reward so far: a rate
 *   smoothed towards 1/2 (one signal in two groups as a prior) and never below `floor`, so a category that starts
 *   to succeed is seen again. Within a category, prompts follow their own shuffled walk. `balance` "category" drops
 *   the category's size from its chance, so a small category with signal is drawn as often as a large one.
 *
 * Only the train split and the run's own rollouts feed the counts. The state lives in the trainer state, so a
 * resumed run draws exactly the prompts it would have drawn.
 *
 * With `data.synthetic_prompts`, `withWorlds` puts a fixed number of the task's fresh worlds among each step's
 * prompts; they are drawn from the step alone and never enter the counts.
 */
import { Rng } from "../util/random.ts";

/** Where a category's walk stands and what its groups have shown so far. */
export interface CategoryState {
  epoch: number;
  offset: number;
  /** Groups played. */
  groups: number;
  /** Groups whose episodes did not all earn the same reward. */
  signal: number;
}

/** The data position of a run: the uniform walk, and the per-category walks and counts of "signal" sampling. */
export interface DataPosition {
  epoch: number;
  offset: number;
  categories?: Record<string, CategoryState>;
}

/** The next `count` prompts of the shuffled training data (reshuffled each epoch), advancing `pos`. */
export function nextPrompts(
  indices: readonly number[],
  count: number,
  seed: number,
  pos: { epoch: number; offset: number },
): number[] {
  const out: number[] = [];
  while (out.length < count) {
    const order = new Rng(seed * 31 + pos.epoch).shuffle([...indices]);
    const take = Math.min(count - out.length, order.length - pos.offset);
    out.push(...order.slice(pos.offset, pos.offset + take));
    pos.offset += take;
    if (pos.offset >= order.length) {
      pos.epoch++;
      pos.offset = 0;
    }
  }
  return out;
}

/** The train split's indices by category, in a fixed order (categories sorted). */
export function byCategory(indices: readonly number[], category: (index: number) => string): Map<string, number[]> {
  const out = new Map<string, number[]>();
  for (const i of indices) {
    const c = category(i);
    (out.get(c) ?? out.set(c, []).get(c)!).push(i);
  }
  return new Map([...out].sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0)));
}

/** A category's chance weight per prompt: its smoothed signal rate, at least `floor`. */
export function signalWeight(s: CategoryState | undefined, floor: number): number {
  return Math.max(floor, ((s?.signal ?? 0) + 1) / ((s?.groups ?? 0) + 2));
}

/**
 * The prompts of RL step `step` under "signal" sampling: each draw picks a category with chance proportional to
 * its weight times its size (`balance` "prompt") or to its weight alone ("category"), then the next prompt of that
 * category's shuffled walk. Advances `pos.categories`.
 */
export function signalPrompts(
  groups: ReadonlyMap<string, readonly number[]>,
  count: number,
  seed: number,
  step: number,
  floor: number,
  pos: DataPosition,
  balance: "prompt" | "category" = "prompt",
): number[] {
  const states = pos.categories ??= {};
  const names = [...groups.keys()];
  const rng = new Rng(seed * 100_003 + step);
  const out: number[] = [];
  for (let k = 0; k < count; k++) {
    const weights = names.map((c) =>
      (balance === "prompt" ? groups.get(c)!.length : 1) * signalWeight(states[c], floor)
    );
    let x = rng.float() * weights.reduce((a, b) => a + b, 0);
    let pick = names.length - 1;
    for (let i = 0; i < names.length; i++) {
      if (x < weights[i]) {
        pick = i;
        break;
      }
      x -= weights[i];
    }
    const name = names[pick];
    const s = states[name] ??= { epoch: 0, offset: 0, groups: 0, signal: 0 };
    out.push(...nextPrompts(groups.get(name)!, 1, seed * 131 + pick, s));
  }
  return out;
}

/**
 * Counts a step's groups into their categories: each group's task, its episodes' rewards and what the environment
 * said about the task at reset (`info`, read by `category` where given: BFCL's server names the entry's category).
 */
export function recordSignal(
  pos: DataPosition,
  groups: Iterable<{ task: number; rewards: readonly number[]; info?: Readonly<Record<string, unknown>> }>,
  category: (index: number, info?: Readonly<Record<string, unknown>>) => string,
): void {
  const states = pos.categories ??= {};
  for (const g of groups) {
    if (g.rewards.length === 0) continue;
    const s = states[category(g.task, g.info)] ??= { epoch: 0, offset: 0, groups: 0, signal: 0 };
    s.groups++;
    if (new Set(g.rewards).size > 1) s.signal++;
  }
}

/**
 * A step's prompts with `worlds` synthetic worlds among the split's `split` (data.synthetic_prompts): world indices
 * `first + k` for k = (step − 1) × worlds + j, j < worlds (a run's worlds never repeat), at positions
 * ⌊(j + ½) × B / worlds⌋ of the B = split + worlds prompts, so every mini-batch of groups gets its share; the split's
 * prompts fill the rest in their order. Drawn from the step alone: a resumed or repeated step gets the same worlds.
 */
export function withWorlds(
  split: readonly number[],
  o: { worlds: number; step: number; first: number },
): number[] {
  const { worlds, step, first } = o;
  const total = split.length + worlds;
  const out = new Array<number>(total);
  for (let j = 0; j < worlds; j++) out[Math.floor(((j + 0.5) * total) / worlds)] = first + (step - 1) * worlds + j;
  let next = 0;
  for (let i = 0; i < total; i++) if (out[i] === undefined) out[i] = split[next++];
  return out;
}
