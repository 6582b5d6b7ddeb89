// Pretraining: batches drawn from (seed, step) alone, held-out tasks never trained on, and the command's promises
// on a tiny budget: the same seed rebuilds the same weights, a resumed run ends where an uninterrupted one does, a
// changed config is refused on resume, and the export is a model directory with its card.
import assert from "node:assert/strict";
import { createHash } from "node:crypto";
import { RunConfig } from "../../src/config/schema.ts";
import { buildTinyModel } from "../../src/model/tiny.ts";
import { loadModelDir, saveModelDir } from "../../src/model/model_dir.ts";
import { EMBED, layerNames } from "../../src/model/params.ts";
import { Tokenizer } from "../../src/model/tokenizer.ts";
import { configuredTask, loadModel, taskTokenizer } from "../../src/train/setup.ts";
import { checkpointName } from "../../src/train/checkpoint.ts";
import { resolveConfig } from "../../src/config/load.ts";
import {
  copyString,
  dataSeed,
  pretrainBatch,
  type PretrainData,
  pretrainData,
  recoveryCount,
} from "../../src/pretrain/data.ts";
import { Rng } from "../../src/util/random.ts";
import { runPretraining } from "../../src/pretrain/run.ts";
import { textcraft } from "../../tasks/textcraft/mod.ts";
import { textCraftVocabulary } from "../../tasks/textcraft/vocabulary.ts";
import { tree } from "../env/helpers.ts";
import { noGpu } from "../no_gpu.ts";
import { runCli, sha } from "../subprocess.ts";

const ROOT = new URL("../../", import.meta.url).pathname;
const synthetic = await textcraft.synthetic!({});
const vocabulary = textCraftVocabulary(tree, textcraft.prompt);
const tok = buildTinyModel(vocabulary.corpus, undefined, vocabulary.phrases).tokenizer;
const stopId = tok.id("<|im_end|>");
const settings = RunConfig.parse({ pretrain: { batch_tokens: 1500, seed: 3 } }).pretrain;

Deno.test("a batch is a function of (seed, step): the same twice, another at the next step, at least batch_tokens", () => {
  const d = pretrainData(textcraft, synthetic, tok, { stopId, heldOut: [] });
  const a = pretrainBatch(d, settings, 5), b = pretrainBatch(d, settings, 5), c = pretrainBatch(d, settings, 6);
  assert.deepEqual(a, b);
  assert.notDeepEqual(a, c);
  for (const { seqs: batch } of [a, c]) {
    assert.ok(batch.reduce((n, q) => n + q.ids.length, 0) >= settings.batch_tokens);
    assert.ok(batch.every((q) => q.ids.length <= settings.max_sequence_tokens));
    assert.ok(batch.every((q) => q.mask.length === q.ids.length - q.promptLength));
  }
  assert.notEqual(dataSeed(3, 5), dataSeed(3, 5, 2), "held-out tasks come from another stream");
});

Deno.test("a training episode whose opening is a held-out task's is drawn again", () => {
  const plain = pretrainData(textcraft, synthetic, tok, { stopId, heldOut: [] });
  const first = pretrainBatch(plain, settings, 1).seqs;
  const decoded = first.map((q) => tok.decode(q.ids));
  const world = decoded.find((t) => t.includes("Crafting commands:"))!;
  const opening = /Crafting commands:[\s\S]*?Goal: craft [^.]+\./.exec(world)![0];
  const guarded = pretrainData(textcraft, synthetic, tok, { stopId, heldOut: [opening] });
  assert.ok(!pretrainBatch(guarded, settings, 1).seqs.some((q) => tok.decode(q.ids).includes(opening)));
  const heldOut = Array.from({ length: 16 }, (_, i) => synthetic.heldOut(424242, i).opening);
  for (let step = 1; step <= 20; step++) {
    const texts = pretrainBatch(plain, settings, step).seqs.map((q) => tok.decode(q.ids));
    assert.ok(!texts.some((t) => heldOut.some((h) => t.includes(h))), `step ${step} holds a held-out world`);
  }
});

const TINY = "hidden_size: 32\nintermediate_size: 64\nnum_hidden_layers: 2\nnum_attention_heads: 2\n" +
  "num_key_value_heads: 1\nrope_theta: 10000\nrms_norm_eps: 1.0e-6\ntie_word_embeddings: true\n" +
  "max_position_embeddings: 4096\ninit_std: 0.05\nseed: 3\n";

const pretrain = (args: string[]) => runCli(["pretrain", ...args]);

/** A temporary folder with the tiny model's YAML, and the overrides of a short run: `steps` steps in chunks of 2. */
async function tinyRun(steps: number, evalTasks: number): Promise<{ dir: string; budget: string[] }> {
  const dir = await Deno.makeTempDir();
  await Deno.writeTextFile(`${dir}/tiny.yaml`, TINY);
  const budget = [
    `model.tiny=${dir}/tiny.yaml`,
    `pretrain.steps=${steps}`,
    "pretrain.chunk_steps=2",
    `pretrain.eval_tasks=${evalTasks}`,
    "pretrain.batch_tokens=800",
  ];
  return { dir, budget };
}

Deno.test({
  name: "pretrain: the same seed rebuilds the same weights; a resumed run ends where an uninterrupted one does",
  ignore: noGpu,
  async fn() {
    const { dir, budget } = await tinyRun(3, 4);
    const started = performance.now();
    for (const run of ["a", "b"]) {
      const r = await pretrain(["--run-dir", `${dir}/${run}`, ...budget]);
      assert.equal(r.code, 0, r.err);
      assert.match(r.out, /Finished after/);
    }
    const weights = (run: string) => sha(`${dir}/${run}/checkpoints/pretrain-step-000003/model.safetensors`);
    assert.equal(await weights("a"), await weights("b"), "rebuilt bit for bit");
    // Its compute time, kept in the trainer state for the model card, adds each chunk once (two chunks here).
    const state = JSON.parse(Deno.readTextFileSync(`${dir}/a/checkpoints/pretrain-step-000003/trainer_state.json`));
    const seconds = Number(state.notes.seconds);
    assert.ok(seconds > 0 && seconds * 1000 < (performance.now() - started) / 2, `${seconds} s`);
    // Stopped after its first step (mid-chunk: a checkpoint is saved on the way out), then resumed: the same
    // weights as the run never stopped.
    const config = resolveConfig({ text: Deno.readTextFileSync(`${ROOT}configs/textcraft_pretrain.yaml`), name: "t" }, [
      ...budget,
    ]);
    const lines = () => {
      try {
        return Deno.readTextFileSync(`${dir}/c/metrics.jsonl`).trim().split("\n").length;
      } catch {
        return 0;
      }
    };
    const quiet = { bar: () => ({ tick() {}, done() {} }), line() {} };
    const first = await runPretraining({
      config,
      runDir: `${dir}/c`,
      resume: false,
      reporter: quiet,
      stopRequested: () => lines() >= 1,
    });
    assert.deepEqual([first.step, first.finished], [1, false]);
    assert.equal(Deno.readTextFileSync(`${dir}/c/checkpoints/latest`).trim(), "pretrain-step-000001");
    // The stop's checkpoint keeps the time of its step, though no chunk ended: the resumed run adds to it.
    const stopped = `${dir}/c/checkpoints/pretrain-step-000001/trainer_state.json`;
    assert.ok(Number(JSON.parse(Deno.readTextFileSync(stopped)).notes.seconds) > 0, "time of a stopped chunk kept");
    const changed = await pretrain(["--resume", `${dir}/c`, "pretrain.lr=0.1"]);
    assert.equal(changed.code, 2);
    assert.match(changed.err, /changed config \(pretrain\.lr\)/);
    const resumed = await pretrain(["--resume", `${dir}/c`, "--save-model", `${dir}/model`]);
    assert.equal(resumed.code, 0, resumed.err);
    assert.equal(await weights("c"), await weights("a"), "resumed bit for bit");
    const evals = (await Deno.readTextFile(`${dir}/a/evals.jsonl`)).trim().split("\n").map((l) => JSON.parse(l));
    assert.deepEqual(evals.map((e) => e.step), [2, 3]);
    assert.ok(evals.every((e) => e.tasks === 4 && typeof e.copy.names === "number"));
    // The first replies are a subset of the replies; the look-up drills are eval_tasks fresh drills from the eval
    // seed's own stream, each ask a run of trained tokens.
    const evalSeed = Number(/eval_seed: (\d+)/.exec(await Deno.readTextFile(`${dir}/a/config.yaml`))![1]);
    const drills = Array.from({ length: 4 }, (_, i) => synthetic.drill!(new Rng(dataSeed(evalSeed, i, 3)), 1));
    const asks = drills.reduce((n, pieces) => n + pieces.filter((p) => p.trained).length, 0);
    // Link tokens: each count of an answer, ` using N` or `, N` (one token each).
    const counts = drills.flat().filter((p) => p.trained).reduce(
      (n, p) => n + p.text.split(/ using \d|, \d/).length - 1,
      0,
    );
    for (const e of evals) {
      assert.ok(e.copy.first >= 0 && e.copy.first <= 1, `first ${e.copy.first}`);
      assert.equal(e.lookup.asks, asks);
      assert.ok(e.lookup.exact >= 0 && e.lookup.exact <= 1 && e.lookup.nll > 0, JSON.stringify(e.lookup));
      assert.equal(e.lookup.linkTokens, counts);
      assert.ok(e.lookup.links >= 0 && e.lookup.links <= 1, JSON.stringify(e.lookup));
    }
    for (const f of ["config.json", "model.safetensors", "tokenizer.json", "crucible.json", "README.md"]) {
      await Deno.stat(`${dir}/model/${f}`);
    }
    assert.equal(await sha(`${dir}/model/model.safetensors`), await weights("c"));
    const card = await Deno.readTextFile(`${dir}/model/README.md`);
    assert.match(card, /3 optimizer steps/);
    assert.match(
      card,
      /A base model for `deno task train textcraft model\.path=\S+\/model`; the shipped config does not/,
    );
    // Its time by adapter: this one's, all of it (the first session's and the resumed one's).
    const notes =
      JSON.parse(Deno.readTextFileSync(`${dir}/c/checkpoints/pretrain-step-000003/trainer_state.json`)).notes;
    const [[adapter, share]] = Object.entries(notes.adapters as Record<string, number>);
    assert.ok(Math.abs(share - notes.seconds) < 1e-6, `${share} of ${notes.seconds} s on ${adapter}`);
    assert.ok(card.includes(`restarts left out), on ${adapter} ${(share / 3600).toFixed(2)} h.`), card);
    assert.match(card, /never reads the\s+game's recipe tables/);
    // An earlier checkpoint of the finished run, with its own evaluation on the card.
    const early = await pretrain(["--resume", `${dir}/c`, "--save-model", `${dir}/early`, "--step", "2"]);
    assert.equal(early.code, 0, early.err);
    assert.equal(
      await sha(`${dir}/early/model.safetensors`),
      await sha(`${dir}/c/checkpoints/pretrain-step-000002/model.safetensors`),
    );
    const earlyCard = await Deno.readTextFile(`${dir}/early/README.md`);
    assert.match(earlyCard, /2 of the recipe's 3 optimizer steps/);
    assert.match(earlyCard, /went on to step 3; this is its checkpoint at step 2/);
    const at2 = JSON.parse((await Deno.readTextFile(`${dir}/c/evals.jsonl`)).trim().split("\n")[0]);
    assert.equal(at2.step, 2);
    assert.ok(earlyCard.includes(`replies exactly right: ${(100 * at2.copy.replies).toFixed(1)}%`), earlyCard);
    assert.ok(
      earlyCard.includes(` ${at2.lookup.asks} asks on fresh lists): ${(100 * at2.lookup.exact).toFixed(1)}%`),
      earlyCard,
    );
    assert.ok(
      earlyCard.includes(
        `their link tokens (the counts, each with the word before it) ${
          (100 * at2.lookup.links).toFixed(1)
        }% right of ${at2.lookup.linkTokens}`,
      ),
      earlyCard,
    );
    // --export, the flag's old name, still works and names the new one.
    const missing = await pretrain(["--resume", `${dir}/c`, "--export", `${dir}/none`, "--step", "5"]);
    assert.equal(missing.code, 2);
    assert.match(missing.err, /no checkpoint at step 5/);
    assert.match(missing.err, /note: --export is now --save-model/);
  },
});

Deno.test({
  name: "pretrain --resume of a saved model goes on from its step in a new run folder, with its config and overrides",
  ignore: noGpu,
  async fn() {
    const { dir, budget } = await tinyRun(4, 2);
    // Step 1 holds copy strings only, so the per-kind copy loss below has a step to show.
    const a = await pretrain([
      "--run-dir",
      `${dir}/a`,
      ...budget,
      "pretrain.copy_warmup_steps=1",
      "--save-model",
      `${dir}/m`,
      "--step",
      "2",
    ]);
    assert.equal(a.code, 0, a.err);
    assert.equal(JSON.parse(await Deno.readTextFile(`${dir}/m/trainer_state.json`)).sftStep, 2);
    const noRunDir = await pretrain(["--resume", `${dir}/m`]);
    assert.equal(noRunDir.code, 2);
    assert.match(noRunDir.err, /is a saved model directory, not a run folder: .* --run-dir DIR/);
    const b = await pretrain(["--resume", `${dir}/m`, "--run-dir", `${dir}/b`]);
    assert.equal(b.code, 0, b.err);
    assert.match(b.err, /going on from .*\/m at step 2 in .*\/b, with its config; AdamW's moments start from zero/);
    assert.equal(await Deno.readTextFile(`${dir}/b/config.yaml`), await Deno.readTextFile(`${dir}/a/config.yaml`));
    const losses = async (run: string) =>
      new Map(
        (await Deno.readTextFile(`${dir}/${run}/metrics.jsonl`)).trim().split("\n").map((l) => JSON.parse(l))
          .filter((l) => l.phase === "pretrain").map((l) => [l.step, l.loss]),
      );
    const [la, lb] = [await losses("a"), await losses("b")];
    assert.deepEqual([...lb.keys()], [3, 4], "steps 3 and 4 only: it went on from step 2");
    // The loss is measured before the step's update: the same weights and the same batch (seed, step 3) as run a.
    assert.equal(lb.get(3), la.get(3));
    // The learning rate follows the step's place in the schedule, though AdamW's moments (and count) start again.
    const lrs = async (run: string) =>
      (await Deno.readTextFile(`${dir}/${run}/metrics.jsonl`)).trim().split("\n").map((l) => JSON.parse(l))
        .filter((l) => l.phase === "pretrain" && l.step > 2).map((l) => l.lr);
    assert.deepEqual(await lrs("b"), await lrs("a"));
    // Each step's copy strings are scored by kind as well; a step without copy strings has neither number.
    let scored = 0;
    for (const run of ["a", "b"]) {
      const rows = (await Deno.readTextFile(`${dir}/${run}/metrics.jsonl`)).trim().split("\n").map((l) => JSON.parse(l))
        .filter((l) => l.phase === "pretrain");
      for (const r of rows) {
        if (r.copy_loss === null) assert.equal(r.copy_loss_by_kind, undefined);
        else {
          const kinds = Object.keys(r.copy_loss_by_kind);
          assert.ok(kinds.length > 0 && kinds.every((k) => k === "plain" || k === "lookup"), kinds.join());
          scored++;
        }
      }
    }
    const again = await pretrain(["--resume", `${dir}/m`, "--run-dir", `${dir}/b`]);
    assert.equal(again.code, 2, "an existing run folder is refused");
    assert.ok(scored > 0, "some step held copy strings");
    // Overrides of data and schedule make the new folder's config; the model's shape, task and prompt stay.
    const c = await pretrain(["--resume", `${dir}/m`, "--run-dir", `${dir}/c`, "pretrain.lr=0.0005"]);
    assert.equal(c.code, 0, c.err);
    assert.match(c.err, /at step 2 in .*\/c, with its config changed in pretrain\.lr; AdamW/);
    assert.match(await Deno.readTextFile(`${dir}/c/config.yaml`), /\n {2}lr: 0\.0005\n/);
    assert.deepEqual([...(await losses("c")).keys()], [3, 4]);
    const shape = await pretrain(["--resume", `${dir}/m`, "--run-dir", `${dir}/d`, "data.prompt.user=Craft."]);
    assert.equal(shape.code, 2);
    assert.match(shape.err, /with data\.prompt\.user changed: its weights were made for/);
    await assert.rejects(Deno.stat(`${dir}/d`), Deno.errors.NotFound, "the refused run leaves no folder");
  },
});

/** A tiny run `a` of 4 steps in chunks of 2 (tinyRun), its step 2 saved as the model directory `m`. */
async function savedAtStep2(): Promise<{ dir: string; budget: string[] }> {
  const { dir, budget } = await tinyRun(4, 2);
  const a = await pretrain(["--run-dir", `${dir}/a`, ...budget, "--save-model", `${dir}/m`, "--step", "2"]);
  assert.equal(a.code, 0, a.err);
  return { dir, budget };
}

/** A command expected to be refused, and what its error must say. */
type Refusal = [Promise<{ code: number; err: string }>, RegExp];

/** Each command exits 2 (an error) with its message. */
async function assertRefused(refused: Refusal[]): Promise<void> {
  for (const [run, why] of refused) {
    const r = await run;
    assert.equal(r.code, 2, r.err);
    assert.match(r.err, why);
  }
}

Deno.test({
  name: "pretrain --add-layer: a saved model goes on with one more layer that starts as a no-op, and learns",
  ignore: noGpu,
  async fn() {
    const { dir } = await savedAtStep2();
    await Deno.writeTextFile(`${dir}/tiny3.yaml`, TINY.replace("num_hidden_layers: 2", "num_hidden_layers: 3"));
    await Deno.writeTextFile(
      `${dir}/wide3.yaml`,
      TINY.replace("num_hidden_layers: 2", "num_hidden_layers: 3")
        .replace("hidden_size: 32", "hidden_size: 48"),
    );
    const grow = (run: string, ...more: string[]) =>
      pretrain(["--resume", `${dir}/m`, "--run-dir", `${dir}/${run}`, "--add-layer", ...more]);
    const refused: Refusal[] = [
      [grow("x", "1"), /--add-layer 1 needs the grown model's shape: add model\.tiny=/],
      [grow("x", "1", `model.tiny=${dir}/wide3.yaml`), /differs from that in hidden_size \(48, grown: 32\)/],
      [
        grow("x", "3", `model.tiny=${dir}/tiny3.yaml`),
        /--add-layer 3: .* has 2 layers, so the new one's place is 0 to 2/,
      ],
      [pretrain(["--resume", `${dir}/a`, "--add-layer", "1"]), /--add-layer grows a model that --save-model wrote/],
    ];
    await assertRefused(refused);
    await assert.rejects(Deno.stat(`${dir}/x`), Deno.errors.NotFound, "a refused growth leaves no folder");

    const g = await grow("g", "1", `model.tiny=${dir}/tiny3.yaml`, "--save-model", `${dir}/m3`);
    assert.equal(g.code, 0, g.err);
    assert.match(g.err, /grew .*\/m to 3 layers at step 2: a new layer at index 1/);
    const losses = async (run: string) =>
      new Map(
        (await Deno.readTextFile(`${dir}/${run}/metrics.jsonl`)).trim().split("\n").map((l) => JSON.parse(l))
          .filter((l) => l.phase === "pretrain").map((l) => [l.step, l.loss]),
      );
    // Step 3's loss is measured before its update, on run a's batch: a no-op layer gives the very same number.
    assert.equal((await losses("g")).get(3), (await losses("a")).get(3));
    const m3 = await loadModelDir(`${dir}/m3`);
    assert.equal(m3.config.numLayers, 3);
    assert.ok(m3.tensors.get(layerNames(1).o)!.some((v) => v !== 0), "the new layer's o_proj learned");
    const state = JSON.parse(await Deno.readTextFile(`${dir}/m3/trainer_state.json`));
    assert.deepEqual(state.notes.grown, [{ step: 2, at: 1, layers: 3 }]);
    assert.match(
      await Deno.readTextFile(`${dir}/m3/README.md`),
      /At step 2 it grew to 3 layers: a new layer at index 1/,
    );
    assert.match(await Deno.readTextFile(`${dir}/m3/pretrain.yaml`), /tiny3\.yaml/);
  },
});

Deno.test("taskTokenizer is the tokenizer a fresh tiny model of the task gets", async () => {
  const c = RunConfig.parse({ task: "textcraft", model: { tiny: "tiny" } });
  const { task } = await configuredTask(c);
  assert.deepEqual((await taskTokenizer(task)).files, (await loadModel(c, task)).tokenizer.files);
});

/**
 * `model` as it was before today's vocabulary grew: `drop` more tokens removed from its tokenizer (its last ids) and
 * their rows from its (tied) embedding, or `add` tokens that today's vocabulary lacks appended with zero rows.
 */
async function editVocab(model: string, out: string, o: { drop?: number; add?: string[] }): Promise<string[]> {
  const m = await loadModelDir(model);
  const V = m.config.vocabSize, C = m.config.hiddenSize, K = o.drop ?? 0, extra = o.add ?? [];
  const json = structuredClone(m.tokenizer!.files.tokenizer);
  const vocab = (json.model as { vocab: Record<string, number> }).vocab;
  const dropped = Object.keys(vocab).filter((t) => vocab[t] >= V - K);
  for (const t of dropped) delete vocab[t];
  extra.forEach((t, i) => vocab[t] = V - K + i);
  const rows = V - K + extra.length, embed = new Float32Array(rows * C);
  embed.set(m.tensors.get(EMBED)!.subarray(0, (V - K) * C));
  await saveModelDir(`${out}.tmp`, {
    config: { ...m.config, vocabSize: rows },
    tensors: new Map(m.tensors).set(EMBED, embed),
    tokenizer: Tokenizer.fromJson(json, m.tokenizer!.files.config),
    dtype: m.dtype,
  });
  await Deno.mkdir(out);
  for await (const f of Deno.readDir(model)) await Deno.copyFile(`${model}/${f.name}`, `${out}/${f.name}`);
  for (const f of ["config.json", "model.safetensors", "tokenizer.json"]) {
    await Deno.copyFile(`${out}.tmp/${f}`, `${out}/${f}`);
  }
  return dropped;
}

Deno.test({
  name: "pretrain --extend-vocab: a saved model gains today's tokens after its own ids (with --add-layer too)",
  ignore: noGpu,
  async fn() {
    const { dir, budget } = await savedAtStep2();
    const m = await loadModelDir(`${dir}/m`);
    const K = 3, V = m.config.vocabSize, C = m.config.hiddenSize;
    const dropped = await editVocab(`${dir}/m`, `${dir}/old`, { drop: K });
    await editVocab(`${dir}/m`, `${dir}/odd`, { add: ["qqq zzz"] });
    const refused: Refusal[] = [
      [pretrain(["--resume", `${dir}/a`, "--extend-vocab"]), /--extend-vocab extends a model that --save-model wrote/],
      [pretrain(["--run-dir", `${dir}/x`, ...budget, "--extend-vocab"]), /--extend-vocab extends a model that/],
      [
        pretrain(["--resume", `${dir}/odd`, "--run-dir", `${dir}/x`, "--extend-vocab"]),
        /the target lacks 1 of the model's tokens \("qqq zzz"\); tokens can only be appended/,
      ],
    ];
    await assertRefused(refused);
    await assert.rejects(Deno.stat(`${dir}/x`), Deno.errors.NotFound, "a refused extension leaves no folder");

    await Deno.writeTextFile(`${dir}/tiny3.yaml`, TINY.replace("num_hidden_layers: 2", "num_hidden_layers: 3"));
    const e = await pretrain([
      ...["--resume", `${dir}/old`, "--run-dir", `${dir}/e`, "--extend-vocab"],
      ...["--add-layer", "2", `model.tiny=${dir}/tiny3.yaml`, "--save-model", `${dir}/me`],
    ]);
    assert.equal(e.code, 0, e.err);
    const shown = dropped.slice(0, 3).map((t) => JSON.stringify(t)).join(", ");
    assert.ok(e.err.includes(`the vocabulary of ${dir}/old gained ${K} tokens (e.g. ${shown}) at step 2`), e.err);
    assert.match(e.err, /grew .*\/old to 3 layers at step 2/);
    // The dropped tokens were the last ids of today's vocabulary, so they come back at the same ids: the extended
    // tokenizer is the one run a trained with, and every batch of steps 3 and 4 has the ids run a's had.
    const start = await loadModelDir(`${dir}/e/checkpoints/${checkpointName("pretrain", 2)}`);
    assert.deepEqual(start.tokenizer!.files, m.tokenizer!.files);
    assert.equal(start.config.vocabSize, V);
    assert.equal(start.config.numLayers, 3);
    // The old rows as saved; each new one the mean of its text's rows under the shorter vocabulary.
    const old = await loadModelDir(`${dir}/old`), w = old.tensors.get(EMBED)!, x = start.tensors.get(EMBED)!;
    assert.deepEqual(x.subarray(0, (V - K) * C), w);
    dropped.forEach((t, i) => {
      const ids = old.tokenizer!.encode(t);
      const want = Array.from({ length: C }, (_, c) => ids.reduce((sum, id) => sum + w[id * C + c], 0) / ids.length);
      assert.deepEqual([...x.subarray((V - K + i) * C, (V - K + i + 1) * C)], want.map(Math.fround), t);
    });
    const state = JSON.parse(await Deno.readTextFile(`${dir}/me/trainer_state.json`));
    assert.equal(state.sftStep, 4);
    assert.deepEqual(state.notes.vocab, [{ step: 2, added: K }]);
    assert.deepEqual(state.notes.grown, [{ step: 2, at: 2, layers: 3 }]);
    assert.equal((await loadModelDir(`${dir}/me`)).config.vocabSize, V);
    assert.match(
      await Deno.readTextFile(`${dir}/me/README.md`),
      new RegExp(`At step 2 its vocabulary gained ${K} tokens, appended after the old ids`),
    );
  },
});

Deno.test("recovery data: a misread reply is context, never trained, and TextCraft's refusals are words, not [UNK]", async () => {
  const withMisreads = await textcraft.synthetic!({ oracle_format: "stack_tail", synthetic_misreads: 0.3 });
  const d = pretrainData(textcraft, withMisreads, tok, { stopId, heldOut: [] });
  let ignored = 0, refusals = 0;
  for (let step = 1; step <= 6; step++) {
    for (const q of pretrainBatch(d, settings, step).seqs) {
      if (!q.ignore) continue;
      q.ignore.forEach((x, j) => {
        if (x) ignored++, assert.equal(q.mask[j], 0, "an ignored token is never trained");
      });
      // Each ignored run is a whole reply: it ends in the stop token, and the game's refusal follows it.
      const text = tok.decode(q.ids);
      assert.ok(!text.includes("[UNK]"), text);
      refusals += (text.match(/Could not find/g) ?? []).length;
    }
  }
  assert.ok(ignored > 0 && refusals > 0, `${ignored} ignored tokens, ${refusals} refusals`);
  const valid = "Could not find a valid recipe for ItemTagWithCount(item_tag=ItemTag(tag=None, " +
    "item_id='minecraft:hay_block'), count=1)";
  assert.equal(tok.decode(tok.encode(valid)), valid);
});

Deno.test({
  name: "a supervised step scores no ignored token, not even by the context loss",
  ignore: noGpu,
  async fn() {
    const { createLearner } = await import("../../src/update/learner.ts");
    const { AdamW } = await import("../../src/update/optimizer.ts");
    const { supervisedStep } = await import("../../src/train/sft.ts");
    const { testGpu } = await import("../no_gpu.ts");
    const gpu = await testGpu();
    const { initParams } = await import("../../src/model/init.ts");
    const { parseModelConfig } = await import("../../src/model/config.ts");
    const config = parseModelConfig({
      model_type: "qwen2",
      vocab_size: 64,
      hidden_size: 32,
      intermediate_size: 64,
      num_hidden_layers: 1,
      num_attention_heads: 2,
      num_key_value_heads: 1,
      tie_word_embeddings: true,
      max_position_embeddings: 64,
    });
    const gradNorm = async (ids: number[], ignore?: number[]) => {
      const l = createLearner(gpu, { config, tensors: initParams(config, 5, { std: 0.05 }) });
      const opt = new AdamW(gpu, l.model.weights, l.grads, {
        beta1: 0.9,
        beta2: 0.99,
        eps: 1e-8,
        weightDecay: 0,
        maxGradNorm: 1,
      });
      // Response: 4 trained tokens, then 4 context tokens (the last ones: changing them moves nothing before).
      const q = { ids, promptLength: 4, mask: [1, 1, 1, 1, 0, 0, 0, 0], ...(ignore ? { ignore } : {}) };
      const r = await supervisedStep(l, opt, { seqs: [q], microBatchTokens: 4096, contextWeight: 0.5, lr: () => 0 });
      // The reported loss is the trained tokens' alone; the context loss shows in the gradient.
      return r.gradNorm;
    };
    const ids = [5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16];
    const other = [...ids.slice(0, 9), 40, 41, 42];
    const ignore = [0, 0, 0, 0, 0, 1, 1, 1];
    // Ignored: the last tokens' values do not reach the gradient; scored as context, they do.
    assert.equal(await gradNorm(ids, ignore), await gradNorm(other, ignore));
    assert.notEqual(await gradNorm(ids), await gradNorm(other));
  },
});

Deno.test("the recovery count, by hand: a refusal followed by an accepted action recovers, a repeated one does not", () => {
  const refused = synthetic.refused!;
  const ep = (...observations: string[]) => ({ turns: observations.map((observation) => ({ observation })) });
  const episodes = [
    ep("Got 1 a", "Could not find b", "Got 1 c", "Crafted 1 minecraft:d"), // refused, then recovered
    ep(
      "Could not find enough items to craft minecraft:d",
      "Could not find enough items to craft minecraft:d",
      "Got 2 e",
    ),
    ep("Got 1 a", "Wrong item format: x"), // the last turn's refusal has no reply after it
  ];
  assert.deepEqual(recoveryCount(episodes, refused), { refused: 3, recovered: 2 });
  assert.ok(!refused("Crafted 4 minecraft:oak_planks") && !refused("Inventory: [oak planks] (4) "));
  assert.deepEqual(recoveryCount([ep("Got 1 a")], refused), { refused: 0, recovered: 0 });
});

Deno.test("copy strings with repeats: tails from a small alphabet that one token back cannot place; 0 leaves batches as they were", () => {
  const d = pretrainData(textcraft, synthetic, tok, { stopId, heldOut: [] });
  const plain = RunConfig.parse({ pretrain: { batch_tokens: 1500, seed: 3, copy_warmup_steps: 10 } }).pretrain;
  const off = { ...plain, copy_repeats: 0 }, on = { ...plain, copy_repeats: 1 };
  // Copy-only batches (steps 1, 4 and 9, in the copy warm-up) as the code wrote them before copy_repeats existed.
  const digest = createHash("sha256");
  for (const step of [1, 4, 9]) {
    for (const q of pretrainBatch(d, off, step).seqs) digest.update(`${q.ids.join(",")};${q.mask.join(",")}|`);
  }
  // Re-pinned when TextCraft's vocabulary gained its count phrases and the word "using" (every id moved); with the
  // vocabulary as it was, the same code gives 759ff944c8136731, the digest of the code before copy_repeats existed.
  assert.equal(digest.digest("hex").slice(0, 16), "c7acb447fe150506", "copy_repeats 0 leaves the data as it was");
  let lookups = 0, ambiguous = 0;
  for (let seed = 0; seed < 200; seed++) {
    const q = copyString(d, new Rng(seed), { repeats: 1 });
    const sep = q.ids.indexOf(stopId, 1), before = q.ids.slice(1, sep);
    if (!before.includes(d.newlineId)) continue; // the plain string copy
    lookups++;
    const lines = splitLines(before, d.newlineId);
    const head = q.ids[q.promptLength - 1], answer = q.ids.slice(q.promptLength, -1);
    assert.ok(lines.some((l) => l[0] === head && l.slice(1).join() === answer.join()), "the asked line's tail");
    const tails = new Set(lines.flatMap((l) => l.slice(1)));
    assert.ok(tails.size <= 8, `the tails use at most 8 distinct tokens, got ${tails.size}`);
    assert.ok(lines.every((l) => l.length >= 4 && l.length <= 9), "a head and 3 to 8 tail tokens");
    // An answer token that occurs more than once in the lines: one token back does not say what follows it.
    if (answer.slice(0, -1).some((t) => before.filter((x) => x === t).length > 1)) ambiguous++;
  }
  assert.ok(lookups > 60, `lookups ${lookups}`);
  assert.ok(ambiguous > lookups / 2, `one-back induction is ambiguous in most lookups: ${ambiguous} of ${lookups}`);
  const withRepeats = pretrainBatch(d, on, 4).seqs.map((q) => q.ids.join());
  assert.notDeepEqual(withRepeats, pretrainBatch(d, off, 4).seqs.map((q) => q.ids.join()));
});

Deno.test("seek copy strings: copy from a random place of the string, never from its start alone; 0 leaves batches as they were", () => {
  const d = pretrainData(textcraft, synthetic, tok, { stopId, heldOut: [] });
  const plain = RunConfig.parse({ pretrain: { batch_tokens: 1500, seed: 3, copy_warmup_steps: 10 } }).pretrain;
  const digest = createHash("sha256");
  for (const step of [1, 4, 9]) {
    for (const q of pretrainBatch(d, { ...plain, copy_seek: 0 }, step).seqs) {
      digest.update(`${q.ids.join(",")};${q.mask.join(",")}|`);
    }
  }
  // The digest above, of the batches before copy_seek existed (re-pinned with the count phrases, as there).
  assert.equal(digest.digest("hex").slice(0, 16), "c7acb447fe150506", "copy_seek 0 leaves the data as it was");
  const starts = new Set<number>();
  let seeks = 0;
  for (let seed = 0; seed < 200; seed++) {
    const q = copyString(d, new Rng(seed), { seek: 1 });
    const sep = q.ids.indexOf(stopId, 1), xs = q.ids.slice(1, sep);
    if (xs.includes(d.newlineId)) {
      assert.equal(q.kind, "lookup");
      continue;
    }
    if (q.ids.length === 2 * xs.length + 2) continue; // a plain copy (a seek answer is at most half the string)
    assert.equal(q.kind, "seek");
    seeks++;
    assert.equal(q.promptLength, sep + 2, "the prompt ends with one name after the separator");
    const asked = q.ids[sep + 1], answer = q.ids.slice(q.promptLength);
    assert.deepEqual(q.mask, answer.map(() => 1));
    assert.ok(answer.length >= 2 && answer.length <= xs.length / 2, `answer of ${answer.length} from ${xs.length}`);
    const from = xs.findIndex((x, f) =>
      f < xs.length / 2 && x === asked && answer.every((a, i) => xs[f + 1 + i] === a)
    );
    assert.ok(from >= 0, "the answer follows the asked name in the string's first half");
    starts.add(from);
  }
  assert.ok(seeks > 60, `seek strings ${seeks}`);
  assert.ok(starts.size >= 10, `the copies start at many places: ${[...starts]}`);
  const batch = pretrainBatch(d, { ...plain, copy_seek: 1 }, 4);
  assert.notDeepEqual(batch.seqs.map((q) => q.ids.join()), pretrainBatch(d, plain, 4).seqs.map((q) => q.ids.join()));
  // Each sequence's kind is recorded for the per-kind copy loss: step 4 is in the copy warm-up, so every sequence is a
  // copy string and has one.
  assert.equal(batch.kinds.length, batch.seqs.length);
  assert.ok(batch.kinds.every((k) => k !== null), `kinds ${batch.kinds}`);
  assert.ok(batch.kinds.includes("seek") && batch.kinds.includes("lookup") && !batch.kinds.includes("plain"));
});

Deno.test("keyed lookups: the asked head also stands in another line's tail, and the answer is the line it starts", () => {
  const d = pretrainData(textcraft, synthetic, tok, { stopId, heldOut: [] });
  let keyed = 0;
  for (let seed = 0; seed < 200; seed++) {
    const q = copyString(d, new Rng(seed), { keyInputs: 1 });
    const sep = q.ids.indexOf(stopId, 1), before = q.ids.slice(1, sep);
    if (!before.includes(d.newlineId)) {
      assert.equal(q.kind, "plain");
      continue;
    }
    assert.equal(q.kind, "lookup_key");
    keyed++;
    const lines = splitLines(before, d.newlineId);
    const head = q.ids[q.promptLength - 1], answer = q.ids.slice(q.promptLength, -1);
    assert.ok(lines.some((l) => l[0] === head && l.slice(1).join() === answer.join()), "the asked line's tail");
    assert.ok(lines.some((l) => l.slice(1).includes(head)), "the head stands inside another line too");
  }
  assert.ok(keyed > 60, `keyed lookups ${keyed}`);
  const c = RunConfig.parse({ pretrain: { batch_tokens: 1500, seed: 3, copy_warmup_steps: 10 } }).pretrain;
  const kinds = pretrainBatch(d, { ...c, copy_key_inputs: 1 }, 4).kinds;
  assert.ok(kinds.includes("lookup_key") && !kinds.includes("lookup"), `kinds ${kinds}`);
});

function splitLines(ids: number[], newline: number): number[][] {
  const out: number[][] = [[]];
  for (const id of ids) id === newline ? out.push([]) : out[out.length - 1].push(id);
  return out.slice(0, -1);
}

Deno.test("drills: the task's look-up drill as a sequence, its answers trained; 0 leaves batches, a task without one is refused", () => {
  const d = pretrainData(textcraft, synthetic, tok, { stopId, heldOut: [] });
  for (let seed = 0; seed < 50; seed++) {
    const q = copyString(d, new Rng(seed), { drill: 1, progress: 1 });
    assert.equal(q.kind, "drill");
    assert.equal(q.ids[0], stopId);
    assert.equal(q.mask.length, q.ids.length - q.promptLength);
    const prompt = tok.decode(q.ids.slice(1, q.promptLength));
    assert.ok(prompt.startsWith("Crafting commands:\n") && prompt.endsWith("\n\nThought:"), prompt);
    // Trained tokens are each ` using N` (one token: TextCraft's count phrases) and the inputs after it, nothing else.
    const rest = q.ids.slice(q.promptLength);
    const marked = rest.map((id, i) => q.mask[i] ? `[${tok.decode([id])}]` : tok.decode([id])).join("");
    for (const frame of marked.split(" |")) {
      assert.match(frame, /^ [^[\]]+\[ using \d\]\[ [^[\]]+\](\[, \d\]\[ [^[\]]+\])*$/, marked);
    }
    // The next ask (` | X`) is scored by no loss, not even the context's: it follows no plan.
    assert.deepEqual(q.ignore, q.mask.map((m) => 1 - m));
    assert.ok(q.ignore!.every((x, i) => !x || /^ \|$|^ [a-z]/.test(tok.decode([rest[i]]))), marked);
  }
  const c = RunConfig.parse({ pretrain: { batch_tokens: 1500, seed: 3, copy_warmup_steps: 10 } }).pretrain;
  const batch = pretrainBatch(d, { ...c, copy_drill: 1 }, 4);
  assert.ok(batch.kinds.every((k) => k === "drill"), `kinds ${batch.kinds}`);
  assert.notDeepEqual(batch.seqs, pretrainBatch(d, c, 4).seqs);
  assert.equal(RunConfig.parse({}).pretrain.copy_drill, 0, "off by default: the other digests pin the batches");
  const none = pretrainData(textcraft, { ...synthetic, drill: undefined }, tok, { stopId, heldOut: [] });
  assert.throws(() => copyString(none, new Rng(1), { drill: 1 }), /pretrain\.copy_drill is 1.*set it to 0/);
  const split = pretrainData(
    textcraft,
    {
      ...synthetic,
      drill: () => [{ text: "Crafting comm", trained: false }, { text: "ands:", trained: true }],
    },
    tok,
    { stopId, heldOut: [] },
  );
  assert.throws(() => copyString(split, new Rng(1), { drill: 1 }), /split tokens/);
});

/**
 * The seek strings of `kind` among the copy strings of seeds 0..n-1 with `o` on (every other copy string is a lookup,
 * which `o` leaves alone): each split into its string (before the separator), the asked tokens after the separator
 * and its answer, which must be 1 to 3 tokens, all trained.
 */
function seekStrings(d: PretrainData, o: Parameters<typeof copyString>[2], kind: string, n: number) {
  const out: { xs: number[]; asked: number[]; answer: number[] }[] = [];
  for (let seed = 0; seed < n; seed++) {
    const q = copyString(d, new Rng(seed), o);
    if (q.kind !== kind) {
      assert.equal(q.kind, "lookup", `with both options on, every plain copy is ${kind}`);
      continue;
    }
    const sep = q.ids.indexOf(stopId, 1), answer = q.ids.slice(q.promptLength);
    assert.deepEqual(q.mask, answer.map(() => 1));
    assert.ok(answer.length >= 1 && answer.length <= 3);
    out.push({ xs: q.ids.slice(1, sep), asked: q.ids.slice(sep + 1, q.promptLength), answer });
  }
  return out;
}

Deno.test("pair-keyed seek strings: the asked pair stands once, its last name many times, the answer follows the pair", () => {
  const d = pretrainData(textcraft, synthetic, tok, { stopId, heldOut: [] });
  let ambiguous = 0;
  const strings = seekStrings(d, { seek: 1, seekPairs: 1 }, "seek_pair", 300), pairs = strings.length;
  for (const { xs, asked, answer } of strings) {
    assert.equal(asked.length, 2, "two names after the separator");
    const [a, b] = asked;
    const at = xs.flatMap((x, j) => (j > 0 && xs[j - 1] === a && x === b ? [j] : []));
    assert.equal(at.length, 1, "the pair stands once in the string");
    assert.deepEqual(xs.slice(at[0] + 1, at[0] + 1 + answer.length), answer);
    if (xs.filter((x) => x === b).length > 1) ambiguous++;
  }
  assert.ok(pairs > 100, `pair-keyed strings ${pairs}`);
  assert.ok(ambiguous > pairs * 0.9, `the last name alone finds several places in ${ambiguous} of ${pairs}`);
  assert.equal(RunConfig.parse({}).pretrain.copy_seek_pairs, 0, "off by default: the other digests pin the batches");
});

Deno.test("link seek strings alternate names and link tokens; the asked name stands once and its link starts the answer", () => {
  const d = pretrainData(textcraft, synthetic, tok, { stopId, heldOut: [] });
  assert.equal(d.linkIds.length, 20, "TextCraft's count phrases `using N` and `, N` are one token each");
  const links = new Set(d.linkIds), names = new Set(d.nameIds);
  const strings = seekStrings(d, { seek: 1, seekLinks: 1 }, "seek_link", 200), mixed = strings.length;
  for (const { xs, asked, answer } of strings) {
    assert.equal(asked.length, 1, "one name after the separator");
    xs.forEach((x, j) => assert.ok(j % 2 === 0 ? names.has(x) : links.has(x), `token ${j} of ${xs.length}`));
    const at = xs.flatMap((x, j) => (x === asked[0] ? [j] : []));
    assert.equal(at.length, 1, "the asked name stands once");
    assert.ok(at[0] < xs.length / 2 + 1, "from the string's first half");
    assert.deepEqual(xs.slice(at[0] + 1, at[0] + 1 + answer.length), answer);
    assert.ok(links.has(answer[0]), "the answer starts with the link after the asked name");
  }
  assert.ok(mixed > 60, `link seek strings ${mixed}`);
  const c =
    RunConfig.parse({ pretrain: { batch_tokens: 3000, seed: 3, copy_share: 1, copy_warmup_steps: 10, copy_seek: 1 } })
      .pretrain;
  const batch = pretrainBatch(d, { ...c, copy_seek_links: 1 }, 4);
  assert.ok(batch.kinds.includes("seek_link") && !batch.kinds.includes("seek"), `kinds ${batch.kinds}`);
  assert.deepEqual(pretrainBatch(d, { ...c, copy_seek_links: 0 }, 4).kinds, pretrainBatch(d, c, 4).kinds);
  assert.equal(RunConfig.parse({}).pretrain.copy_seek_links, 0, "off by default: the other digests pin the batches");
  const none = pretrainData(textcraft, { ...synthetic, links: undefined }, tok, { stopId, heldOut: [] });
  assert.throws(() => copyString(none, new Rng(2), { seek: 1, seekLinks: 1 }), /copy_seek_links is 1.*set it to 0/);
});
