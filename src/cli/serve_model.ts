/**
 * `deno task serve-model --model DIR [--adapter DIR] [--port N]`: serves a model (a Hugging Face directory, a Crucible
 * checkpoint or a Hub name) as an OpenAI-compatible API (src/serve/openai.ts) on Crucible's own KV-cached sampler,
 * concurrent requests batched into shared decode blocks, until interrupted.
 */
import { getGpu } from "../gpu/device.ts";
import { Generator } from "../model/generate.ts";
import { KV_CACHE_SETTINGS } from "../config/schema.ts";
import type { CacheSetting } from "../model/infer.ts";
import { loadGpuModel } from "../model/load.ts";
import { DecodeBatcher } from "../serve/batcher.ts";
import { KEY_ENV, serveOpenAI } from "../serve/openai.ts";
import { Access, keysFrom } from "../env/server/access.ts";
import { dryRun, numberFlag, parseFlags } from "../command/args.ts";
import { localModel } from "../command/model_arg.ts";

const USAGE = `Usage: deno task serve-model --model DIR [--adapter DIR] [options]

Serves a model as an OpenAI-compatible API: POST /v1/chat/completions (the model's chat template; tools passed to
it, and <tool_call> blocks returned as OpenAI tool_calls), POST /v1/completions, GET /v1/models; streaming with
"stream": true. Concurrent requests share decode blocks (continuous batching) on Crucible's KV-cached sampler.

Options:
  --model DIR        a Hugging Face model directory, a Crucible checkpoint, or a Hub name org/name[@revision]
  --adapter DIR      a PEFT LoRA adapter (a LoRA run's checkpoint) on the model
  --name NAME        the model name /v1/models lists and replies echo (default: --model as given)
  --port N           port to listen on; 0 picks a free one                               (default 8000)
  --host NAME        interface to bind; beyond loopback a key is required               (default 127.0.0.1)
  --allowed-host NAME  a name requests may call the server by (their Host), beyond the loopback names
                     and --host (bound to 0.0.0.0: this machine's name and addresses); repeatable.
                     Any other Host gets a 421 (a DNS-rebinding page calls it by the attacker's name)
  --api-key KEY      a key (16+ characters) every request must carry as Authorization: Bearer KEY (OpenAI
                     clients send their apiKey so); repeatable, one per client. Default: ${KEY_ENV}, else
                     none (loopback only). Never printed.
  --max-requests-per-client N  requests one client (address, and key when several) may have in
                     flight, decoding or waiting; more get a 429                        (default 64)
  --max-body-bytes N largest request body; a larger one gets a 413                    (default 1048576)
  --body-timeout-s S seconds a request body may take to arrive; then a 408            (default 10)
  --header-timeout-s S  seconds a request's line and headers may take to arrive; a slower
                     one gets a 408 and its connection is closed                        (default 10)
  --slots N          sequences decoded at once; more requests wait for a slot            (default 8)
  --max-len N        tokens per sequence, prompt and reply together                      (default 4096, at most
                     the model's max_position_embeddings)
  --max-tokens N     reply tokens when a request names no max_tokens                     (default 256)
  --kv-cache TYPE    ${KV_CACHE_SETTINGS.join(", ")}                                          (default auto)
  --block-steps N    tokens sampled per sequence per GPU round trip                      (default 8)
  -h, --help         this text

Examples:
  deno task serve-model --model models/crucible-tiny --port 8000
  ${KEY_ENV}=$(openssl rand -hex 16) deno task serve-model --model models/crucible-tiny --host 0.0.0.0
  deno task serve-model --model Qwen/Qwen2.5-0.5B-Instruct --adapter runs/lora/checkpoints/final   # eval --help
Then, with the openai package: new OpenAI({ baseURL: "http://127.0.0.1:8000/v1", apiKey: "none" }) (the key,
where the server has one).`;

/** Runs the command until interrupted. */
export async function main(args: string[]): Promise<void> {
  const { values: v } = parseFlags("deno task serve-model", {
    args,
    options: {
      model: { type: "string" },
      adapter: { type: "string" },
      name: { type: "string" },
      port: { type: "string" },
      host: { type: "string", default: "127.0.0.1" },
      slots: { type: "string" },
      "max-len": { type: "string" },
      "max-tokens": { type: "string" },
      "kv-cache": { type: "string", default: "auto" },
      "block-steps": { type: "string" },
      "api-key": { type: "string", multiple: true },
      "max-requests-per-client": { type: "string" },
      "max-body-bytes": { type: "string" },
      "body-timeout-s": { type: "string" },
      "header-timeout-s": { type: "string" },
      "allowed-host": { type: "string", multiple: true },
      help: { type: "boolean", short: "h" },
    },
  });
  if (v.help) return console.log(USAGE);
  if (!v.model) throw new TypeError(`--model DIR is required. ${USAGE}`);
  const port = numberFlag("--port", v.port, 8000, { lo: 0, hi: 65535, integer: true });
  const slots = numberFlag("--slots", v.slots, 8, { lo: 1, hi: 1024, integer: true });
  const blockSteps = numberFlag("--block-steps", v["block-steps"], 8, { lo: 1, hi: 256, integer: true });
  const maxTokens = numberFlag("--max-tokens", v["max-tokens"], 256, { lo: 1, integer: true });
  if (!(KV_CACHE_SETTINGS as readonly string[]).includes(v["kv-cache"]!)) {
    throw new RangeError(`--kv-cache must be one of ${KV_CACHE_SETTINGS.join(", ")}, got "${v["kv-cache"]}"`);
  }
  const perClient = numberFlag("--max-requests-per-client", v["max-requests-per-client"], 64, {
    lo: 1,
    integer: true,
  });
  const maxBodyBytes = numberFlag("--max-body-bytes", v["max-body-bytes"], 1 << 20, {
    lo: 1,
    hi: 1 << 30,
    integer: true,
  });
  const bodyTimeoutMs = numberFlag("--body-timeout-s", v["body-timeout-s"], 10, { lo: 0.001, hi: 3600 }) * 1000;
  const headersTimeoutMs = numberFlag("--header-timeout-s", v["header-timeout-s"], 10, { lo: 0.001, hi: 3600 }) *
    1000;
  // Before the model loads: a bind beyond loopback without a key stops here, naming the flag.
  const keys = keysFrom(v["api-key"], KEY_ENV);
  const access = new Access({ hostname: v.host!, keys, title: "serve-model", keyFlag: "--api-key", keyEnv: KEY_ENV });
  if (dryRun(`would serve ${v.model} on port ${port}`)) return;
  const dir = await localModel(v.model);
  const gpu = await getGpu();
  const g = await loadGpuModel(gpu, dir, { adapter: v.adapter });
  if (!g.tokenizer) throw new TypeError(`${dir} has no tokenizer.json; serving text needs the model's tokenizer`);
  const maxLen = numberFlag("--max-len", v["max-len"], Math.min(4096, g.config.maxPositions), {
    lo: 2,
    hi: g.config.maxPositions,
    integer: true,
  });
  const generator = new Generator(g.model, { slots, maxLen, blockSteps, cache: v["kv-cache"] as CacheSetting });
  const server = await serveOpenAI({
    batcher: new DecodeBatcher(generator),
    tokenizer: g.tokenizer,
    stopIds: g.stopIds,
    modelName: v.name ?? v.model,
    maxLen,
    defaultMaxTokens: maxTokens,
    perClient,
    maxBodyBytes,
    bodyTimeoutMs,
  }, { port, hostname: v.host, keys, allowedHosts: v["allowed-host"], headersTimeoutMs });
  const warning = access.bindWarning(Number(new URL(server.url).port), "requests");
  if (warning) console.error(warning);
  const keyed = access.keyed ? `, ${keys.length} key${keys.length > 1 ? "s" : ""} asked` : "";
  console.log(
    `Serving ${v.model} (OpenAI API) at ${server.url}; ${slots} slots of ${maxLen} tokens${keyed}. Ctrl-C stops.`,
  );
}
