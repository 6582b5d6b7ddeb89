/**
 * The onnx engine's decode speed beside Crucible's, on the same model: onnxruntime-web (wasm backend, one thread)
 * running the exported decoder through the OnnxSampler, and Crucible's Generator decoding the same single sequence
 * (the onnx engine runs sequences one at a time, so one sequence is the like-for-like comparison).
 */
import { onnxBytes } from "../src/onnx/export.ts";
import { createSession, loadOrt, ORT_WEB } from "../src/onnx/runtime.ts";
import { OnnxSampler } from "../src/onnx/sampler.ts";
import { tokenIds } from "./inputs.ts";
import { type BenchModel, measureDecode } from "./model_run.ts";

/** What the onnx decode measurement found, or why it could not run. */
export type OnnxDecodeResult = {
  engine: string;
  promptLen: number;
  tokens: number;
  /** Tokens/s of one sequence's decode steps (prefill excluded), onnxruntime-web, best of 3 runs. */
  tokensPerS: number;
  /** Tokens/s of Crucible's Generator on one sequence, same prompt length. */
  crucibleOneSeqTokensPerS: number;
} | { engine: string; error: string };

/**
 * SYNC POINTS: one session call per token (the onnx engine reads logits back each step), best of 3 runs of `tokens`
 * steps; Crucible's side as in measureDecode. A first call of each engine is not timed (set-up, shader compiles).
 */
export async function measureOnnxDecode(m: BenchModel, promptLen: number, tokens: number): Promise<OnnxDecodeResult> {
  const engine = `${ORT_WEB.slice(4)} (wasm, 1 thread)`;
  if (!m.tensors) return { engine, error: "the model's parameters are not on the host" };
  let sampler: OnnxSampler;
  try {
    const tensors = new Map(m.tensors);
    const session = await createSession(await onnxBytes({ config: m.config, tensors }, "f32"));
    sampler = new OnnxSampler(await loadOrt(), session, m.config, { slots: 2, maxLen: promptLen + tokens + 16 });
  } catch (e) {
    return { engine, error: e instanceof Error ? e.message : String(e) };
  }
  const prompt = [...tokenIds(promptLen, m.config.vocabSize, 2000)];
  const limits = (n: number) => [{ maxNewTokens: n, stopIds: [] }];
  const warm = sampler.open(prompt, 0);
  await sampler.decode([warm], limits(4));
  sampler.close(warm);
  let best = 0, decodeTokens = 0;
  for (let run = 1; run <= 3; run++) {
    const before = { ...sampler.timing };
    const seq = sampler.open(prompt, run);
    await sampler.decode([seq], limits(tokens + 1));
    sampler.close(seq);
    decodeTokens = sampler.timing.decodeTokens - before.decodeTokens;
    best = Math.max(best, decodeTokens / (sampler.timing.decodeSeconds - before.decodeSeconds));
  }
  await sampler.session.release();
  const blocks = Math.max(1, Math.round(tokens / 9));
  const crucible = await measureDecode(m, { seqs: 1, promptLen, steps: 8, blocks });
  return {
    engine,
    promptLen,
    tokens: decodeTokens,
    tokensPerS: best,
    crucibleOneSeqTokensPerS: crucible.tokensPerS,
  };
}
