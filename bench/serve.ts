/**
 * `deno task bench serve`: what continuous batching buys the OpenAI endpoint (src/serve/). N chat requests of M reply
 * tokens each (vLLM's `ignore_eos`, so every reply has exactly M tokens) sent to an in-process server on loopback, first
 * one after another, then all at once; prints wall time, reply tokens per second and the decode blocks each took.
 */
import { getGpu } from "../src/gpu/device.ts";
import { Generator } from "../src/model/generate.ts";
import { loadGpuModel } from "../src/model/load.ts";
import { DecodeBatcher } from "../src/serve/batcher.ts";
import { serveOpenAI } from "../src/serve/openai.ts";
import { dryRun, numberFlag, parseFlags } from "../src/command/args.ts";
import { localModel } from "../src/command/model_arg.ts";

export const SERVE_USAGE = `Usage: deno task bench serve [--model DIR] [--requests N] [--tokens M] [--json]

Sends N chat completions of M reply tokens each to the OpenAI endpoint on loopback, one at a time and then all at
once, and prints wall time, reply tokens/s and decode blocks for each (slots = N, so all run together).

Options:
  --model DIR      the model (default models/crucible-tiny; a Hub name works too)
  --requests N     requests (default 8)
  --tokens M       reply tokens per request (default 64)
  --json           one JSON line per mode
  -h, --help       this text

Example:
  deno task bench serve --requests 8 --tokens 64`;

/** Runs the subcommand. */
export async function main(args: string[]): Promise<void> {
  const { values: v } = parseFlags("deno task bench serve", {
    args,
    options: {
      model: { type: "string", default: "models/crucible-tiny" },
      requests: { type: "string" },
      tokens: { type: "string" },
      json: { type: "boolean" },
      help: { type: "boolean", short: "h" },
    },
  });
  if (v.help) return console.log(SERVE_USAGE);
  const n = numberFlag("--requests", v.requests, 8, { lo: 1, hi: 256, integer: true });
  const m = numberFlag("--tokens", v.tokens, 64, { lo: 1, hi: 4096, integer: true });
  if (dryRun(`would time ${n} requests of ${m} tokens`)) return;
  const g = await loadGpuModel(await getGpu(), await localModel(v.model!));
  if (!g.tokenizer) throw new TypeError(`${v.model} has no tokenizer.json`);
  const maxLen = Math.min(g.config.maxPositions, 256 + m);
  const generator = new Generator(g.model, { slots: n, maxLen, blockSteps: 8 });
  const batcher = new DecodeBatcher(generator);
  // One client sends all n at once: its quota of requests in flight is n.
  const options = { batcher, tokenizer: g.tokenizer, stopIds: g.stopIds, modelName: "bench", maxLen, perClient: n };
  const server = await serveOpenAI(options);
  const ask = (k: number) =>
    fetch(`${server.url}/chat/completions`, {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: JSON.stringify({
        messages: [{ role: "user", content: `Goal: craft ${k + 1} oak planks.` }],
        max_tokens: m,
        temperature: 1,
        seed: k,
        ignore_eos: true,
      }),
    }).then(async (r) => {
      const body = await r.json();
      if (!r.ok) throw new Error(`The server answered ${r.status}: ${JSON.stringify(body)}`);
      return body.usage.completion_tokens as number;
    });
  try {
    await ask(0); // compiles the pipelines
    for (const mode of ["one at a time", "all at once"]) {
      const blocks = batcher.stats.blocks, t0 = performance.now();
      let tokens = 0;
      if (mode === "all at once") {
        tokens = (await Promise.all(Array.from({ length: n }, (_, k) => ask(k)))).reduce((a, b) => a + b, 0);
      } else for (let k = 0; k < n; k++) tokens += await ask(k);
      const seconds = (performance.now() - t0) / 1000;
      const row = {
        mode,
        requests: n,
        tokens,
        seconds,
        tokens_per_s: tokens / seconds,
        blocks: batcher.stats.blocks - blocks,
      };
      console.log(
        v.json
          ? JSON.stringify(row)
          : `${mode.padEnd(14)} ${n} requests, ${tokens} reply tokens in ${seconds.toFixed(2)} s: ` +
            `${row.tokens_per_s.toFixed(0)} tokens/s, ${row.blocks} decode blocks`,
      );
    }
  } finally {
    await server.shutdown();
    generator.release();
    g.model.weights.release();
  }
}
