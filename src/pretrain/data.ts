/**
 * Pretraining a base model on a task's synthetic tasks (`deno task pretrain`): every batch is drawn afresh from
 * (seed, step), so no data file exists and no world repeats, and the run goes in chunks that each end with a
 * checkpoint and an evaluation on held-out synthetic tasks (greedy, from a seed training never draws from, whose
 * openings are also refused in training). A resumed run continues bit for bit: weights, moments, the step count,
 * and the data, which depends on the step alone.
 */
import { Batch } from "../gpu/batch.ts";
import { PackedInputs, packSequences } from "../model/packing.ts";
import { ChatRenderer } from "../rollout/chat.ts";
import type { SyntheticTasks, Task, TextEpisode } from "../task/task.ts";
import { Rng } from "../util/random.ts";
import type { RunConfig } from "../config/schema.ts";
import type { Learner } from "../update/learner.ts";
import { microBatches, toPositions, type TrainSequence } from "../update/sequences.ts";
import { episodeSequence } from "../train/sft_data.ts";

/** Seed of the generator that draws batch `step` (or held-out task `step` with `stream` 2). */
export function dataSeed(seed: number, step: number, stream = 1): number {
  let h = Math.imul(seed ^ 0x9e3779b9, 0x85ebca6b) ^ Math.imul(step + 1, 0xc2b2ae35) ^ Math.imul(stream, 0x27d4eb2f);
  h = Math.imul(h ^ (h >>> 15), 0x2c1b3c6d);
  return (h ^ (h >>> 13)) | 0;
}

/** What one pretraining batch is made from. */
export interface PretrainData {
  synthetic: SyntheticTasks;
  chat: ChatRenderer;
  prompt: { user: string; assistant: string };
  stopId: number;
  /** Token ids of the task's names that are single tokens (for copy strings). */
  nameIds: number[];
  /** Token ids of the task's link phrases that are single tokens (SyntheticTasks.links), for mixed seek strings. */
  linkIds: number[];
  /** The id of "\n", which ends a line in lookup strings. */
  newlineId: number;
  /** Openings of the held-out tasks: a training episode (or drill) with one of them is drawn again. */
  heldOut: ReadonlySet<string>;
  /** The task's look-up drill, tokenized (SyntheticTasks.drill), when it has one. */
  drill?: (rng: Rng, progress: number) => TrainSequence;
}

/** The data of a pretraining run for a task and tokenizer. */
export function pretrainData(
  task: Task,
  synthetic: SyntheticTasks,
  tok: ChatRenderer["tokenizer"],
  o: { stopId: number; heldOut: readonly string[] },
): PretrainData {
  const singleTokens = (phrases: readonly string[], spaced: boolean) => {
    const ids = new Set<number>();
    for (const n of phrases) {
      for (const form of spaced ? [n, ` ${n}`] : [n]) {
        const encoded = tok.encode(form);
        if (encoded.length === 1) ids.add(encoded[0]);
      }
    }
    return [...ids].sort((a, b) => a - b);
  };
  const nameIds = singleTokens(synthetic.names, true);
  if (nameIds.length < 16) throw new RangeError(`Only ${nameIds.length} of ${task.name}'s names are single tokens`);
  return {
    synthetic,
    chat: new ChatRenderer(tok, task.tools?.bind(task)),
    prompt: task.prompt,
    stopId: o.stopId,
    nameIds,
    linkIds: singleTokens(synthetic.links ?? [], false),
    newlineId: tok.encode("\n")[0],
    heldOut: new Set(o.heldOut),
    drill: synthetic.drill &&
      ((rng, progress) => drillSequence(tok, o, synthetic.drill!.bind(synthetic), rng, progress)),
  };
}

/**
 * A drill as a training sequence: the stop token, then the pieces' tokens, trained where the piece is and scored by no
 * loss where a piece after the first is not (the next ask, which follows no plan). Each piece is
 * tokenized alone, so a task whose pieces split a token (their tokens differ from the whole text's) is refused; a
 * drill that starts with a held-out task's opening is drawn again.
 */
function drillSequence(
  tok: ChatRenderer["tokenizer"],
  o: { stopId: number; heldOut: readonly string[] },
  drill: NonNullable<SyntheticTasks["drill"]>,
  rng: Rng,
  progress: number,
): TrainSequence {
  for (;;) {
    const pieces = drill(rng, progress);
    if (o.heldOut.some((h) => pieces[0]?.text.startsWith(h))) continue;
    const parts = pieces.map((p) => ({ ids: tok.encode(p.text), trained: p.trained }));
    const ids = [o.stopId, ...parts.flatMap((p) => p.ids)];
    const whole = tok.encode(pieces.map((p) => p.text).join(""));
    if (whole.join() !== ids.slice(1).join()) {
      throw new RangeError(
        `A drill's pieces split tokens: ${JSON.stringify(pieces.map((p) => p.text))} encode apart as ` +
          `${ids.length - 1} tokens, whole as ${whole.length}; the task must cut its drill where the tokenizer does`,
      );
    }
    // An untrained first piece is the prompt; the mask covers every piece after it. The untrained pieces after it
    // (TextCraft: ` | X`, the next ask) are scored by no loss, not even pretrain.context_loss_weight's: they follow
    // no plan, and a reply pushes a frame only for an input that has a line.
    const lead = parts.length > 0 && !parts[0].trained ? 1 : 0;
    const promptLength = 1 + (lead ? parts[0].ids.length : 0);
    const mask = parts.slice(lead).flatMap((p) => p.ids.map(() => (p.trained ? 1 : 0)));
    return { ids, promptLength, mask, ignore: mask.map((m) => 1 - m) };
  }
}

/** What a copy string asks for (copyString). */
export type CopyKind = "plain" | "seek" | "seek_pair" | "seek_link" | "lookup" | "lookup_key" | "drill";

/** One pretraining batch: its sequences, and which kind of copy string each is (null: an episode). */
export interface PretrainBatch {
  seqs: TrainSequence[];
  kinds: (CopyKind | null)[];
}

/**
 * Batch `step`: synthetic episodes rendered as chat (replies trained, mask 1) and a share of copy strings (a
 * random string of names, a separator, the same string; the copy trained), to `batch_tokens` tokens or more.
 */
export function pretrainBatch(d: PretrainData, c: RunConfig["pretrain"], step: number): PretrainBatch {
  const rng = new Rng(dataSeed(c.seed, step));
  const progress = Math.min(1, step / c.curriculum_steps);
  const copyShare = step <= c.copy_warmup_steps ? 1 : c.copy_share * (1 - (2 / 3) * progress);
  const seqs: TrainSequence[] = [], kinds: (CopyKind | null)[] = [];
  let tokens = 0;
  while (tokens < c.batch_tokens) {
    let q: TrainSequence, kind: CopyKind | null = null;
    const copy = rng.float() < copyShare;
    if (copy) {
      ({ kind, ...q } = copyString(d, rng, {
        repeats: c.copy_repeats,
        seek: c.copy_seek,
        seekPairs: c.copy_seek_pairs,
        seekLinks: c.copy_seek_links,
        keyInputs: c.copy_key_inputs,
        drill: c.copy_drill,
        progress,
      }));
    } else {
      const episode = d.synthetic.episode(rng, progress);
      if (d.heldOut.has(episode.opening)) continue;
      q = episodeSequence(d.chat, d.prompt, episode, d.stopId);
      if (q.ids.length > c.max_sequence_tokens) continue;
    }
    seqs.push(q);
    kinds.push(kind);
    tokens += q.ids.length;
  }
  return { seqs, kinds };
}

/**
 * A generic string that only copying solves: half the time a random string of names, a separator and the same
 * string again (the copy trained); else 2 to 12 lines of a head name and 1 to 4 more, a separator, one line's head
 * and the rest of that line (the rest trained): a lookup by content. With `repeats` (pretrain.copy_repeats), that
 * share of the lookups write each line's tail, 3 to 8 tokens, from one alphabet of 3 to 8 names: the tokens repeat
 * across lines as a command line's `using`, commas and counts do, so one token back finds many places and the copy must
 * keep its place in the line. With `seek` (pretrain.copy_seek), that share of the plain copies start from a random
 * place: the string, the separator, one name of its first half, then what follows that name (a quarter to a half of the
 * string). A plain copy can be learned by counting positions from the two separators, and a model that learned it so
 * reads no lookup (docs/notes/2026-11-base-model-runs.md); a seek string cannot be learned so. With `keyInputs`
 * (pretrain.copy_key_inputs), that share of the lookups also write the asked head inside another line's tail, as a
 * command list names a crafted item again among another recipe's inputs: only the place where a line starts it holds
 * the answer. With `drill` (pretrain.copy_drill), that share of all copy strings are the task's own look-up drills
 * (SyntheticTasks.drill) at curriculum `progress`: the look-up in the words and layout of its replies.
 */
export function copyString(
  d: PretrainData,
  rng: Rng,
  o: {
    repeats?: number;
    seek?: number;
    seekPairs?: number;
    seekLinks?: number;
    keyInputs?: number;
    drill?: number;
    progress?: number;
  } = {},
): TrainSequence & { kind: CopyKind } {
  const { repeats = 0, seek = 0, seekPairs = 0, seekLinks = 0, keyInputs = 0, drill = 0, progress = 1 } = o;
  // The draw for a drill happens only when the option is on, so 0 leaves every batch as it was.
  if (drill > 0 && rng.float() < drill) {
    if (!d.drill) {
      throw new RangeError(
        `pretrain.copy_drill is ${drill}, but this task's synthetic data has no look-up drill; set it to 0`,
      );
    }
    return { ...d.drill(rng, progress), kind: "drill" };
  }
  const name = () => d.nameIds[rng.int(d.nameIds.length)];
  if (rng.float() < 0.5) {
    const xs = Array.from({ length: 8 + rng.int(41) }, name);
    // The draws for a seek string happen only when the option is on, so 0 leaves every batch as it was.
    if (seek > 0 && rng.float() < seek) {
      // The draw for a pair-keyed seek string happens only when that option is on, as above.
      if (seekPairs > 0 && rng.float() < seekPairs) return seekPair(d, rng);
      // Likewise for a seek string that alternates names and link phrases.
      if (seekLinks > 0 && rng.float() < seekLinks) return seekLink(d, rng, seekLinks);
      const from = rng.int(Math.ceil(xs.length / 2));
      const n = Math.floor(xs.length / 4) + rng.int(Math.ceil(xs.length / 4));
      const prompt = [d.stopId, ...xs, d.stopId, xs[from]], answer = xs.slice(from + 1, from + 1 + n);
      return { ids: [...prompt, ...answer], promptLength: prompt.length, mask: answer.map(() => 1), kind: "seek" };
    }
    const ids = [d.stopId, ...xs, d.stopId, ...xs];
    return { ids, promptLength: xs.length + 2, mask: xs.map(() => 1), kind: "plain" };
  }
  // The draw for a repeating string happens only when the option is on, so 0 leaves every batch as it was.
  const alphabet = repeats > 0 && rng.float() < repeats ? Array.from({ length: 3 + rng.int(6) }, name) : undefined;
  const line = alphabet
    ? () => [name(), ...Array.from({ length: 3 + rng.int(6) }, () => alphabet[rng.int(alphabet.length)])]
    : () => Array.from({ length: 2 + rng.int(4) }, name);
  const lines = Array.from({ length: 2 + rng.int(11) }, line);
  const at = rng.int(lines.length), asked = lines[at];
  // The draws for a keyed lookup happen only when the option is on, so 0 leaves every batch as it was.
  const keyed = keyInputs > 0 && rng.float() < keyInputs;
  if (keyed) {
    // The asked head also stands in another line's tail, as a crafted item is another line's input: what follows
    // it there is not the answer, so the copy must find the head where a line starts.
    const other = lines[(at + 1 + rng.int(lines.length - 1)) % lines.length];
    other[1 + rng.int(other.length - 1)] = asked[0];
  }
  const prompt = [d.stopId, ...lines.flatMap((l) => [...l, d.newlineId]), d.stopId, asked[0]];
  const answer = [...asked.slice(1), d.newlineId];
  const kind = keyed ? "lookup_key" : "lookup";
  return { ids: [...prompt, ...answer], promptLength: prompt.length, mask: answer.map(() => 1), kind };
}

/**
 * A seek string keyed by two tokens (pretrain.copy_seek_pairs): a string of 16 to 48 names from an alphabet of 4 to
 * 8, the separator, two adjacent names from its first half, then the 1 to 3 names that follow them there. Each name
 * of the alphabet stands many times, so the last name alone finds many places; only the pair does, and each answer
 * token is likewise the one after the two tokens before it (each such pair stands once in the string). A command
 * list asks the same of a reply: the count after `X using` is found by the pair, as `using` follows every line's item
 * and X also stands among other lines' inputs.
 */
function seekPair(d: PretrainData, rng: Rng): TrainSequence & { kind: CopyKind } {
  for (;;) {
    const alphabet = Array.from({ length: 4 + rng.int(5) }, () => d.nameIds[rng.int(d.nameIds.length)]);
    const xs = Array.from({ length: 16 + rng.int(33) }, () => alphabet[rng.int(alphabet.length)]);
    // The pair that ends at position j, and how many times each pair stands in the string.
    const pair = (j: number) => `${xs[j - 1]},${xs[j]}`, pairs = new Map<string, number>();
    for (let j = 1; j < xs.length; j++) pairs.set(pair(j), (pairs.get(pair(j)) ?? 0) + 1);
    const once = (j: number) => pairs.get(pair(j)) === 1;
    const k = 1 + rng.int(Math.floor(xs.length / 2)), n = 1 + rng.int(3);
    // The asked pair and each pair the answer continues from stand once; else another string is drawn.
    if (!Array.from({ length: n }, (_, i) => k + i).every(once)) continue;
    const prompt = [d.stopId, ...xs, d.stopId, xs[k - 1], xs[k]], answer = xs.slice(k + 1, k + 1 + n);
    return { ids: [...prompt, ...answer], promptLength: prompt.length, mask: answer.map(() => 1), kind: "seek_pair" };
  }
}

/**
 * A seek string over names and link phrases (pretrain.copy_seek_links): 4 to 24 names, each followed by a link token
 * drawn from the task's (TextCraft: `using 9`, `, 1`), the separator, one name of the string's first half, then the 1
 * to 3 tokens that follow it there. The answer starts with a link token found by the name before it, the place of a
 * command list's count after X; a model whose match on content keys only on names (it copies names after names but not
 * the link after a name, docs/notes/2026-11-base-model-runs.md) has to key on the link tokens too. The asked name
 * stands once.
 */
function seekLink(d: PretrainData, rng: Rng, share: number): TrainSequence & { kind: CopyKind } {
  if (d.linkIds.length === 0) {
    throw new RangeError(`pretrain.copy_seek_links is ${share}, but this task names no link phrases; set it to 0`);
  }
  for (;;) {
    const names = Array.from({ length: 4 + rng.int(21) }, () => d.nameIds[rng.int(d.nameIds.length)]);
    const xs = names.flatMap((x) => [x, d.linkIds[rng.int(d.linkIds.length)]]);
    const k = 2 * rng.int(Math.ceil(names.length / 2)), n = 1 + rng.int(3);
    if (names.filter((x) => x === xs[k]).length > 1) continue; // the asked name must find one place
    const prompt = [d.stopId, ...xs, d.stopId, xs[k]], answer = xs.slice(k + 1, k + 1 + n);
    return { ids: [...prompt, ...answer], promptLength: prompt.length, mask: answer.map(() => 1), kind: "seek_link" };
  }
}

/** Teacher-forced reading of held-out demonstrations: how much of the replies a greedy policy would write. */
export interface CopyAccuracy {
  /** Share of name tokens in replies that the model predicts with probability above 1/2 (so greedy writes them). */
  names: number;
  /** Share of replies whose every token is predicted so. */
  replies: number;
  /** Share of episodes whose first reply is predicted so (TextCraft: the goal's line looked up from the list). */
  first: number;
  /** Mean NLL of reply tokens. */
  nll: number;
}

/**
 * Runs the model over sequences (one forward per micro-batch, no gradients) and calls `visit` with each trained
 * position's sequence, position and log-probability of the next token, in order.
 */
async function readTrained(
  l: Learner,
  seqs: readonly TrainSequence[],
  visit: (q: TrainSequence, p: number, logp: number) => void,
): Promise<void> {
  for (const group of microBatches(seqs, 8192)) {
    const part = group.map((i) => seqs[i]);
    const inputs = new PackedInputs(l.gpu, packSequences(part.map((q) => ({ ids: q.ids }))));
    const batch = new Batch(l.gpu);
    const out = l.model.forward(batch, inputs, {});
    const [logp] = await batch.read([out.logp]); // one readback per micro-batch
    for (const t of [out.logp, out.entropy]) t.release();
    inputs.release();
    let at = 0;
    for (const q of part) {
      const trained = toPositions(q, q.mask);
      for (let p = 0; p + 1 < q.ids.length; p++) if (trained[p]) visit(q, p, logp[at + p]);
      at += q.ids.length;
    }
  }
}

const share = (a: number, b: number) => (b === 0 ? 0 : a / b);

/** Scores held-out demonstrations token by token. */
export async function copyAccuracy(
  l: Learner,
  d: PretrainData,
  episodes: readonly TextEpisode[],
): Promise<CopyAccuracy> {
  const seqs = episodes.map((e) => episodeSequence(d.chat, d.prompt, e, d.stopId));
  const names = new Set(d.nameIds);
  let nameCount = 0, nameRight = 0, replies = 0, repliesRight = 0, firstRight = 0, tokens = 0, nll = 0;
  let current: TrainSequence | undefined, replyOk = true, nth = 0;
  await readTrained(l, seqs, (q, p, lp) => {
    if (q !== current) current = q, replyOk = true, nth = 0;
    const right = lp > Math.log(0.5);
    tokens++, nll -= lp;
    replyOk &&= right;
    if (names.has(q.ids[p + 1])) nameCount++, nameRight += right ? 1 : 0;
    if (q.ids[p + 1] === d.stopId) {
      replies++, repliesRight += replyOk ? 1 : 0;
      if (nth++ === 0) firstRight += replyOk ? 1 : 0;
      replyOk = true;
    }
  });
  return {
    names: share(nameRight, nameCount),
    replies: share(repliesRight, replies),
    first: share(firstRight, seqs.length),
    nll: share(nll, tokens),
  };
}

/** Teacher-forced reading of look-up drills: how many asks a greedy policy answers right. */
export interface LookupAccuracy {
  /** Asks read (each a run of trained tokens). */
  asks: number;
  /** Share of asks whose every token the model predicts with probability above 1/2. */
  exact: number;
  /** Mean NLL of the answers' tokens. */
  nll: number;
  /**
   * Share of the answers' link tokens (SyntheticTasks.links; TextCraft: the counts) predicted with probability above
   * 1/2, and how many there were; absent when the task names no link phrases.
   */
  links?: number;
  linkTokens?: number;
}

/**
 * Scores `count` look-up drills drawn from `seed` (a stream training never draws from) at full curriculum, or
 * undefined when the task has no drill.
 */
export async function lookupAccuracy(
  l: Learner,
  d: PretrainData,
  seed: number,
  count: number,
): Promise<LookupAccuracy | undefined> {
  if (!d.drill) return undefined;
  const seqs = Array.from({ length: count }, (_, i) => d.drill!(new Rng(dataSeed(seed, i, 3)), 1));
  let asks = 0, right = 0, tokens = 0, nll = 0, ok = true, links = 0, linksRight = 0;
  let current: TrainSequence | undefined, last = -2;
  const linkIds = new Set(d.linkIds);
  const close = () => {
    if (last >= 0) asks++, right += ok ? 1 : 0;
  };
  await readTrained(l, seqs, (q, p, lp) => {
    // A new ask starts where a run of trained positions does.
    if (q !== current || p !== last + 1) close(), ok = true;
    if (q !== current) current = q;
    const hit = lp > Math.log(0.5);
    ok &&= hit;
    tokens++, nll -= lp, last = p;
    if (linkIds.has(q.ids[p + 1])) links++, linksRight += hit ? 1 : 0;
  });
  close();
  const linkShare = linkIds.size > 0 ? { links: share(linksRight, links), linkTokens: links } : {};
  return { asks, exact: share(right, asks), nll: share(nll, tokens), ...linkShare };
}

/** Refused actions with a reply after them, and how many of those replies the environment accepted. */
export interface Recovery {
  refused: number;
  recovered: number;
}

/**
 * Counts, over episodes, the refused actions that a reply followed and the ones whose next action was accepted: the
 * recovery rate is recovered / refused (a model that repeats a failed craft recovers none).
 */
export function recoveryCount(
  episodes: readonly { turns: readonly { observation: string }[] }[],
  refused: (observation: string) => boolean,
): Recovery {
  let n = 0, ok = 0;
  for (const e of episodes) {
    for (let i = 0; i + 1 < e.turns.length; i++) {
      if (!refused(e.turns[i].observation)) continue;
      n++;
      if (!refused(e.turns[i + 1].observation)) ok++;
    }
  }
  return { refused: n, recovered: ok };
}
