/**
 * How deep the play page's agent can plan: its success by TextCraft depth from the latest evaluation Crucible wrote
 * of it, and the note the page shows for a task of a given depth (a warning where the agent solved none at that
 * depth, or was never evaluated there). A task's depth is how many crafts deep its goal's recipe chain goes: depth 1
 * is one craft from base items, depth 4 a chain of four.
 *
 * The evaluation comes from, in order: the run folder of a checkpoint (`<run>/checkpoints/<name>`: the last line of
 * `<run>/evals.jsonl` with results by depth), or the model card (README.md) that `deno task pretrain --save-model`
 * writes, whose "success:" line lists them.
 */

/** An agent's success share (0 to 1) by TextCraft depth, and where it was measured. */
export interface DepthSkill {
  /** "models/crucible-tiny/README.md (64 held-out synthetic worlds)", "runs/x/evals.jsonl (step 40)". */
  source: string;
  /** Depth (as a string, "1".."4") -> success share. */
  byDepth: Record<string, number>;
}

/** The depths of an evaluation's categories ("depth 2" -> "2"), or undefined when it has none. */
function depths(byCategory: Record<string, { avg: number }> | undefined): Record<string, number> | undefined {
  const out: Record<string, number> = {};
  for (const [k, r] of Object.entries(byCategory ?? {})) {
    const d = /^depth (\d+)$/.exec(k)?.[1];
    if (d && Number.isFinite(r?.avg)) out[d] = r.avg;
  }
  return Object.keys(out).length ? out : undefined;
}

async function fromRun(dir: string): Promise<DepthSkill | undefined> {
  const run = /^(.*)\/checkpoints\/[^/]+\/*$/.exec(dir)?.[1];
  if (run === undefined) return undefined;
  const text = await Deno.readTextFile(`${run}/evals.jsonl`).catch(() => "");
  const lines = text.split("\n").filter((l) => l.trim()).map((l) => {
    try {
      return JSON.parse(l) as { step?: number; byCategory?: Record<string, { avg: number }> };
    } catch {
      return undefined; // a line cut by a crash; the ones before it still count
    }
  });
  for (const line of lines.reverse()) {
    const byDepth = depths(line?.byCategory);
    if (byDepth) return { source: `${run}/evals.jsonl (step ${line!.step ?? "?"})`, byDepth };
  }
  return undefined;
}

async function fromCard(dir: string): Promise<DepthSkill | undefined> {
  const card = await Deno.readTextFile(`${dir}/README.md`).catch(() => "");
  const line = /^- success: [\d.]+% \(([^)]*)\)/m.exec(card)?.[1];
  if (!line) return undefined;
  const byDepth: Record<string, number> = {};
  for (const m of line.matchAll(/depth (\d+): ([\d.]+)%/g)) byDepth[m[1]] = Number(m[2]) / 100;
  const worlds = /^## Held-out results \(greedy, (\d+) synthetic worlds/m.exec(card)?.[1];
  const where = worlds ? ` (${worlds} held-out synthetic worlds)` : "";
  return Object.keys(byDepth).length ? { source: `${dir}/README.md${where}`, byDepth } : undefined;
}

/**
 * The agent's success by depth from its latest evaluation, or undefined when Crucible wrote none beside it.
 *
 * @example
 * ```ts
 * const skill = await readDepthSkill("models/crucible-tiny"); // { byDepth: { "1": 0.25, "2": 0, ... }, source }
 * ```
 */
export async function readDepthSkill(dir: string): Promise<DepthSkill | undefined> {
  const clean = dir.replace(/\/+$/, "");
  return await fromRun(clean) ?? await fromCard(clean);
}

const pct = (x: number) => `${(100 * x).toFixed(x > 0 && x < 0.1 ? 1 : 0)}%`;

/**
 * What the page says about playing a task of `depth` with this agent: `warn` when the agent cannot plan that deep
 * as far as its evaluation shows (it solved none at that depth, or was never evaluated there).
 *
 * @example
 * ```ts
 * depthNote(3, { source: "m/README.md", byDepth: { "1": 0.25, "3": 0 } }).warn; // true
 * ```
 */
export function depthNote(depth: number, skill: DepthSkill | undefined): { text: string; warn: boolean } {
  if (depth < 1) return { text: "", warn: false };
  if (!skill) {
    return {
      text: `A depth-${depth} task. No evaluation of this agent by depth was found beside it; ` +
        "`deno task eval --model DIR` measures one.",
      warn: false,
    };
  }
  const measured = Object.keys(skill.byDepth).map(Number).sort((a, b) => a - b);
  const best = measured.reduce((b, d) => (skill.byDepth[d] > skill.byDepth[b] ? d : b), measured[0]);
  const suits = skill.byDepth[best] > 0 ? ` It does best at depth ${best} (${pct(skill.byDepth[best])}).` : "";
  const share = skill.byDepth[depth];
  if (share === undefined) {
    return {
      text: `This agent was never evaluated at depth ${depth} (${skill.source} covers depth ` +
        `${measured.join(", ")}): it may not plan this deep.${suits}`,
      warn: true,
    };
  }
  if (share === 0) {
    return {
      text: `This agent solved none of the depth-${depth} tasks in its evaluation (${skill.source}): it cannot ` +
        `plan this deep yet, so expect its suggestions to go wrong.${suits}`,
      warn: true,
    };
  }
  return {
    text: `This agent solved ${pct(share)} of depth-${depth} tasks in its evaluation (${skill.source}).`,
    warn: false,
  };
}
