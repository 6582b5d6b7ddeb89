// data.synthetic_prompts in real runs of the tiny random model: off, a step plays exactly the prompts the split's walk
// draws; on, each step plays its share of fresh worlds (never a test goal) beside the split's prompts, logs reward
// and success of both kinds side by side, and a killed and resumed run ends bit for bit where a straight one does.
// The refusals (external servers, pretraining's seeds, a task without worlds, a share that rounds to none) need no GPU.
import assert from "node:assert/strict";
import { resolveConfig } from "../../src/config/load.ts";
import { loadModelDir } from "../../src/model/model_dir.ts";
import { nextPrompts } from "../../src/rl/prompts.ts";
import { runTraining } from "../../src/train/run.ts";
import { idToName } from "../../tasks/textcraft/game/python.ts";
import { TEXTCRAFT_SPLITS } from "../../tasks/textcraft/mod.ts";
import { parseOpening } from "../../tasks/textcraft/stack.ts";
import { SMOKE_MODEL_YAML, SMOKE_RUN } from "../../bench/smoke_run.ts";
import { tree } from "../env/helpers.ts";
import { noGpu } from "../no_gpu.ts";
import type { Reporter } from "../../src/train/types.ts";

const QUIET: Reporter = { bar: () => ({ tick() {}, done() {} }), line() {} };
const FIRST = 1_000_000;

async function config(dir: string, extra: string[]) {
  await Deno.writeTextFile(`${dir}/tiny.yaml`, SMOKE_MODEL_YAML);
  return resolveConfig({ text: "task: textcraft\n", name: "test" }, [
    `model.tiny=${dir}/tiny.yaml`,
    ...SMOKE_RUN,
    "data.prompt_file=null",
    "sft.enabled=false",
    "actor.lr=0.01",
    "trainer.total_steps=2",
    "trainer.test_freq=0",
    ...extra,
  ]);
}

function run(
  c: Awaited<ReturnType<typeof config>>,
  runDir: string,
  o: Partial<Parameters<typeof runTraining>[0]> = {},
) {
  return runTraining({ config: c, runDir, resume: false, reporter: QUIET, stopRequested: () => false, ...o });
}

function jsonLines(path: string): Record<string, unknown>[] {
  return Deno.readTextFileSync(path).trim().split("\n").map((l) => JSON.parse(l));
}

/** Each RL step's prompts as played: the task of every group, in group order. */
function playedPrompts(runDir: string): number[][] {
  const steps: number[][] = [];
  for (const e of jsonLines(`${runDir}/rollouts.jsonl`).filter((e) => e.phase === "rl")) {
    const s = (steps[(e.step as number) - 1] ??= []);
    s[e.group as number] = e.task as number;
  }
  return steps;
}

Deno.test({
  name: "synthetic prompts off: each step plays exactly the split's shuffled walk, and no numbers by kind",
  ignore: noGpu,
  async fn() {
    const dir = await Deno.makeTempDir();
    const c = await config(dir, []);
    await run(c, `${dir}/run`);
    const pos = { epoch: 0, offset: 0 };
    const want = [1, 2].map(() => nextPrompts(TEXTCRAFT_SPLITS.train, 2, c.trainer.seed, pos));
    assert.deepEqual(playedPrompts(`${dir}/run`), want);
    for (const m of jsonLines(`${dir}/run/metrics.jsonl`)) {
      assert.deepEqual(Object.keys(m).filter((k) => /^(split|synthetic)_/.test(k)), []);
    }
  },
});

Deno.test({
  name: "synthetic prompts on: a world per step beside the split's prompt, metrics by kind, resumed bit for bit",
  ignore: noGpu,
  async fn() {
    const dir = await Deno.makeTempDir();
    const c = await config(dir, ["data.synthetic_prompts.share=0.5", "data.prompt_sampling.type=signal"]);
    const lines: string[] = [];
    await run(c, `${dir}/straight`, { reporter: { ...QUIET, line: (t) => lines.push(t) } });
    const played = playedPrompts(`${dir}/straight`);
    // One of the two prompts is world (step − 1), in the second place; the other comes from the train split.
    assert.deepEqual(played.map((p) => p[1]), [FIRST, FIRST + 1]);
    for (const p of played) assert.ok(TEXTCRAFT_SPLITS.train.includes(p[0]), `${p[0]} is a train task`);
    const testGoals = new Set(TEXTCRAFT_SPLITS.test.map((i) => idToName(tree.goals[i].id)));
    const worlds = jsonLines(`${dir}/straight/rollouts.jsonl`).filter((e) =>
      e.phase === "rl" && (e.task as number) >= FIRST
    );
    assert.equal(worlds.length, 2 * 2);
    for (const e of worlds) {
      const o = parseOpening(e.first as string);
      assert.ok(!testGoals.has(o.goal), `world goal ${o.goal} is a test goal`);
    }
    const metrics = jsonLines(`${dir}/straight/metrics.jsonl`).filter((m) => m.phase === "rl");
    assert.equal(metrics.length, 2);
    for (const m of metrics) {
      for (const k of ["split_reward_mean", "split_success_rate", "synthetic_reward_mean", "synthetic_success_rate"]) {
        assert.equal(typeof m[k], "number", `${k} in ${JSON.stringify(m)}`);
      }
    }
    assert.ok(
      lines.some((l) => /^step 1\/2 .*\(split reward \S+ success \S+; synthetic reward/.test(l)),
      lines.join("\n"),
    );
    // Killed after RL step 1 and resumed: the same prompts, the same final weights.
    const resumed = `${dir}/resumed`;
    const stopAfterStep1 = () => {
      try {
        return Deno.readTextFileSync(`${resumed}/metrics.jsonl`).includes('"phase":"rl"');
      } catch {
        return false;
      }
    };
    assert.equal((await run(c, resumed, { stopRequested: stopAfterStep1 })).interrupted, true);
    assert.equal((await run(c, resumed, { resume: true })).interrupted, false);
    assert.deepEqual(playedPrompts(resumed), played);
    const want = (await loadModelDir(`${dir}/straight/checkpoints/final`)).tensors;
    const got = (await loadModelDir(`${resumed}/checkpoints/final`)).tensors;
    for (const [name, w] of want) assert.deepEqual(got.get(name), w, name);
  },
});

Deno.test("synthetic prompts are refused, naming the option and the fix, where they cannot be played", async () => {
  const dir = await Deno.makeTempDir();
  const refused = async (overrides: string[], text: string, why: RegExp) => {
    const c = resolveConfig({ text, name: "test" }, overrides);
    await assert.rejects(run(c, `${dir}/run`), why);
    await assert.rejects(Deno.stat(`${dir}/run`), Deno.errors.NotFound);
  };
  const on = "data.synthetic_prompts.share=0.25";
  await refused(
    [on, "env.urls=[http://127.0.0.1:9]"],
    "task: textcraft\n",
    /data\.synthetic_prompts\.share=0\.25 plays synthetic worlds on Crucible's embedded textcraft server.*Leave out --env-url/,
  );
  await refused([on, "data.synthetic_prompts.seed=7"], "task: textcraft\n", /seed=7 is pretrain\.seed.*pick another/);
  await refused(
    [on, "data.synthetic_prompts.seed=8", "model.path=models/crucible-base"],
    "task: textcraft\n",
    /seed=8 is pretrain\.seed of models\/crucible-base\/pretrain\.yaml/,
  );
  await refused(
    [on, "env.urls=[http://127.0.0.1:9]"],
    "task: babyai\n",
    /which the babyai task does not make; set it to 0/,
  );
  assert.throws(
    () => resolveConfig({ text: "task: textcraft\n", name: "test" }, ["data.synthetic_prompts.share=0.05"]),
    /data\.synthetic_prompts\.share.*rounds to none: set at least 0\.0625/,
  );
});
