// A model that solves a depth-1 TextCraft task, and the task, for the play page's browser test. In order:
//   1. CRUCIBLE_PLAY_MODEL=DIR, or models/crucible-tiny when it exists: the first depth-1 task of the test split
//      (then of the train split) that it solves greedily within 6 rounds, played as the page plays (PageAgent on the
//      onnx engine), so the page's episode is the same one;
//   2. otherwise, or when that model solves none of the first 24: a tiny model fine-tuned here for 120 SFT steps on
//      task 0's oracle episode alone (`deno task sft`, about 25 s on lavapipe), which it then solves in 2 turns.
// The trained model is what the test is about; the fine-tuned one keeps the test meaningful before one exists.
import { envClient } from "../../tasks/mod.ts";
import { serveTextCraft } from "../../tasks/textcraft/game/server.ts";
import { openOnnxEngine } from "../../src/onnx/engine.ts";
import { PageAgent } from "../../src/play/agent.ts";
import { readAgentSettings } from "../../src/train/agent_settings.ts";
import { textcraft, TEXTCRAFT_SPLITS } from "../../tasks/textcraft/mod.ts";
import { depthOf } from "../../tasks/textcraft/rules.ts";
import { runDeno } from "../subprocess.ts";

const ROOT = new URL("../../", import.meta.url).pathname;

/** Where the trained model is looked for. */
export const TRAINED = Deno.env.get("CRUCIBLE_PLAY_MODEL") ?? `${ROOT}models/crucible-tiny`;

/** Whether the trained model is there (else the test fine-tunes one, which needs a GPU adapter). */
export const hasTrained: boolean = await Deno.stat(`${TRAINED}/config.json`).then(() => true, () => false);

/** A model directory, a depth-1 task it solves, and where the model came from. */
export interface Solver {
  dir: string;
  task: number;
  source: string;
}

/** The first of `tasks` that the model at `dir` solves greedily within `rounds`, or undefined. */
async function firstSolved(dir: string, tasks: readonly number[], rounds: number): Promise<number | undefined> {
  const settings = await readAgentSettings(dir);
  const engine = await openOnnxEngine(dir, { backend: "wasm", slots: 1, maxLen: 4096 });
  const server = await serveTextCraft({ port: 0 });
  const client = envClient("textcraft", { urls: [server.url] });
  try {
    const agent = new PageAgent(engine.sampler, engine.tokenizer!, {
      prompt: settings?.prompt ?? textcraft.prompt,
      maxTokensPerTurn: settings?.max_tokens_per_turn ?? 64,
      temperature: 0,
      stopIds: engine.stopIds,
    });
    for (const task of tasks) {
      const env = await client.create({ parseAction: textcraft.parseAction });
      agent.start(await env.reset(task));
      for (let r = 0; r < rounds; r++) {
        const reply = await agent.reply();
        const step = await env.step(reply.text);
        agent.record(reply.text, step.observation);
        if (step.done && textcraft.isSuccess(step.reward)) return task;
        if (step.done) break;
      }
      await env.close();
    }
    return undefined;
  } finally {
    client.close();
    await server.shutdown();
    await engine.release();
  }
}

async function fineTuned(): Promise<Solver> {
  const dir = await Deno.makeTempDir({ prefix: "crucible-play-" });
  await Deno.writeTextFile(`${dir}/items.json`, JSON.stringify([{ item_id: "textcraft_0" }]));
  const r = await runDeno([
    ...["run", "-A", "--lock=tests/deno.lock", "src/cli/main.ts", "sft", "textcraft"],
    ...["--out", `${dir}/model`, "--run-dir", `${dir}/run`],
    `data.train_items=${dir}/items.json`,
    `data.test_items=${dir}/items.json`,
    "sft.epochs=120",
    "sft.context_loss_weight=0",
    "sft.lr_schedule.warmup_steps=2",
    "task_options.rename_items=0",
    "task_options.drop_distractors=0",
    "task_options.oracle_format=action",
  ]);
  if (r.code !== 0) throw new Error(`Fine-tuning the stand-in model failed:\n${r.err}`);
  return { dir: `${dir}/model`, task: 0, source: "a tiny model fine-tuned on task 0 in the test" };
}

/** The model and task the browser test plays (see the file's comment). */
export async function solver(): Promise<Solver> {
  if (hasTrained) {
    const depth1 = [...TEXTCRAFT_SPLITS.test, ...TEXTCRAFT_SPLITS.train].filter((i) => depthOf(i) === 1);
    const task = await firstSolved(TRAINED, depth1.slice(0, 24), 6);
    if (task !== undefined) return { dir: TRAINED, task, source: TRAINED };
  }
  const tuned = await fineTuned();
  const task = await firstSolved(tuned.dir, [0], 6);
  if (task === undefined) throw new Error(`${tuned.source} does not solve task 0`);
  return tuned;
}
