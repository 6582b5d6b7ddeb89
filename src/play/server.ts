/**
 * The play server: one page where a person plays TextCraft beside a trained agent that runs in the browser. Everything
 * the page loads comes from here (on loopback, by the game servers' listener, src/env/server/listen.ts, which closes
 * slow and idle connections):
 *
 *   GET  /                     the page (page.html) and GET /app.js, its script (app.ts bundled for the browser)
 *   GET  /vendor/...           onnxruntime-web's browser build and its wasm binary, from the installed package
 *   GET  /model/...            the agent: onnx/model.onnx (exported at start, in memory), config.json, tokenizer.json,
 *                              tokenizer_config.json, generation_config.json
 *   GET  /play/settings        the agent's prompt, limits and temperature (its crucible.json) and the task count
 *   *    /env/...              the game's server (TextCraft's, handed in by the command), embedded: its routes,
 *                              guards and messages unchanged
 *
 * The TextCraft routes keep their guards: JSON bodies only and no cross-origin browser requests (the page is same
 * origin, and the loopback names of this server count as one origin). Every route refuses a Host the server does not
 * answer to (421; the loopback names, the bound address and `allowedHosts`), as every server of Crucible's does. A reset to a task index outside the game's
 * tasks is answered here with an error naming the range, since TextCraft itself wraps indices around.
 */
import { hostRefusal, servedNames } from "../env/server/access.ts";
import { listen } from "../env/server/listen.ts";
import type { GameHandler, GameServerOptions } from "../env/server/serve.ts";
import { toHfConfig } from "../model/config.ts";
import type { LoadedModel } from "../model/model_dir.ts";
import { onnxBytes } from "../onnx/export.ts";
import { ONNX_LOCK, ortDistDir } from "../onnx/runtime.ts";
import page from "./page.html" with { type: "text" };
import type { DepthSkill } from "./skill.ts";

/** What the page's agent plays with (a checkpoint's crucible.json, or the task's defaults). */
export interface PlaySettings {
  prompt: { user: string; assistant: string };
  maxRounds: number;
  maxTokensPerTurn: number;
  /** Longest conversation the agent may hold, in tokens. */
  maxLen: number;
  temperature: number;
  /** The agent's success by depth from its latest evaluation, when one was found (src/play/skill.ts). */
  skill?: DepthSkill;
}

/** The game the page plays, handed in by the command (TextCraft's, from tasks/textcraft/game/server.ts). */
export interface PlayGame {
  /** Its name in the page's errors. */
  title: string;
  /** Its task count: a reset outside [0, tasks) is refused here. */
  tasks: number;
  /** Its game server's handler, built with these settings. */
  handler(options: GameServerOptions): GameHandler;
}

/** Options of {@linkcode servePlay}. */
export interface PlayOptions {
  game: PlayGame;
  model: LoadedModel;
  /** Shown in the page. */
  modelName: string;
  settings: PlaySettings;
  /** Default 8000; 0 picks a free port. */
  port?: number;
  /** Default 127.0.0.1. */
  hostname?: string;
  /** Names a request's Host may carry beyond the loopback names and `hostname` (play --allowed-host). */
  allowedHosts?: readonly string[];
}

/** A running play server. */
export interface PlayServer {
  url: string;
  port: number;
  shutdown(): Promise<void>;
}

const ROOT = new URL("../../", import.meta.url);
const APP = new URL("src/play/app.ts", ROOT).pathname;
const ORT_FILES = ["ort.wasm.bundle.min.mjs", "ort-wasm-simd-threaded.mjs", "ort-wasm-simd-threaded.wasm"];
const TYPES: Record<string, string> = {
  mjs: "text/javascript; charset=utf-8",
  js: "text/javascript; charset=utf-8",
  wasm: "application/wasm",
  json: "application/json",
  html: "text/html; charset=utf-8",
  onnx: "application/octet-stream",
};

/** The page's script: app.ts and what it imports (tokenizer, chat template, sampler), bundled for the browser. */
export async function bundleApp(): Promise<string> {
  return await bundleForBrowser(APP, { what: "deno task play", lock: new URL(ONNX_LOCK, ROOT).pathname });
}

/** Options of {@linkcode bundleForBrowser}. */
export interface BundleOptions {
  /** The command that needs the bundle, for its errors. */
  what: string;
  /** The lock file the bundle resolves its packages with. */
  lock: string;
  /** An import map for the bundle (e.g. stand-ins for Node built-ins that a browser lacks). */
  importMap?: string;
}

/**
 * A browser script: the module at `entry` and everything it imports, shaders and other text imports inlined,
 * bundled by `deno bundle --platform browser` into one minified ES module. Needs Crucible's source tree.
 */
export async function bundleForBrowser(entry: string, o: BundleOptions): Promise<string> {
  try {
    await Deno.stat(entry);
  } catch {
    throw new Deno.errors.NotFound(
      `${o.what} needs Crucible's source tree (${entry} is missing): run it from a checkout, not from a bundle`,
    );
  }
  const out = await Deno.makeTempFile({ suffix: ".js" });
  try {
    const r = await new Deno.Command(Deno.execPath(), {
      args: [
        "bundle",
        "--minify",
        "--platform",
        "browser",
        `--lock=${o.lock}`,
        "--node-modules-dir=none",
        ...(o.importMap ? ["--import-map", o.importMap] : []),
        "-o",
        out,
        entry,
      ],
      cwd: ROOT.pathname,
      stdout: "piped",
      stderr: "piped",
    }).output();
    if (r.code !== 0) throw new Error(`Bundling the page of ${o.what} failed:\n${new TextDecoder().decode(r.stderr)}`);
    return await Deno.readTextFile(out);
  } finally {
    await Deno.remove(out).catch(() => {});
  }
}

function response(body: BodyInit, name: string): Response {
  const type = TYPES[name.slice(name.lastIndexOf(".") + 1)] ?? "application/octet-stream";
  return new Response(body, { headers: { "content-type": type, "cache-control": "no-store" } });
}

/**
 * Starts the play server; resolves once it listens. A port in use is a clear error.
 *
 * @example
 * ```ts
 * const server = await servePlay({ model, modelName: "crucible-tiny", settings, port: 0 });
 * console.log(`open ${server.url}`);
 * ```
 */
export async function servePlay(o: PlayOptions): Promise<PlayServer> {
  const [app, ortDir, onnx] = await Promise.all([bundleApp(), ortDistDir(), onnxBytes(o.model, "f32")]);
  const hostname = o.hostname ?? "127.0.0.1";
  const tasks = o.game.tasks;
  let url = "", origins = new Set<string>();
  const game = o.game.handler({
    origin: () => url,
    idleMs: 30 * 60_000,
    maxEnvs: 256,
    hostname,
    allowedHosts: o.allowedHosts,
  });
  const hosts = new Set(servedNames(hostname, o.allowedHosts));
  const tok = o.model.tokenizer;
  const files: Record<string, () => BodyInit> = {
    "/": () => page,
    "/app.js": () => app,
    "/model/onnx/model.onnx": () => onnx as Uint8Array<ArrayBuffer>,
    "/model/config.json": () => JSON.stringify(toHfConfig(o.model.config)),
    "/model/tokenizer.json": () => JSON.stringify(tok?.files.tokenizer ?? {}),
    "/model/tokenizer_config.json": () => JSON.stringify(tok?.files.config ?? {}),
    "/model/generation_config.json": () => JSON.stringify(o.model.generationConfig ?? {}),
    "/play/settings": () => JSON.stringify({ ...o.settings, tasks, model: o.modelName }),
  };
  for (const f of ORT_FILES) files[`/vendor/${f}`] = () => Deno.readFileSync(`${ortDir}${f}`);

  const handler = async (req: Request): Promise<Response> => {
    const refused = hostRefusal(req, hosts);
    if (refused) return new Response(refused.message, { status: refused.status });
    const path = new URL(req.url).pathname;
    if (path.startsWith("/env/")) return await envRoute(req, path.slice(4));
    const file = files[path];
    if (!file || req.method !== "GET") return new Response("Not Found", { status: 404 });
    return response(file(), path === "/" ? "page.html" : path === "/play/settings" ? "s.json" : path);
  };
  // The game's routes, with the loopback aliases of this server taken as its own origin.
  const envRoute = async (req: Request, path: string): Promise<Response> => {
    const headers = new Headers(req.headers);
    if (origins.has(headers.get("origin") ?? "")) headers.set("origin", url);
    const body = req.method === "POST" ? await req.arrayBuffer() : undefined;
    if (path === "/reset" && body) {
      const refused = outOfRange(body, tasks, o.game.title);
      if (refused) return refused;
    }
    return await game(new Request(new URL(path + new URL(req.url).search, url), { method: req.method, headers, body }));
  };

  const port = o.port ?? 8000;
  let server;
  try {
    server = await listen(handler, () => url, {
      hostname,
      port,
      headersTimeoutMs: 10_000,
      requestTimeoutMs: 21_000,
      name: "The play server",
    });
  } catch (e) {
    if (e instanceof Deno.errors.AddrInUse || (e as { code?: string }).code === "EADDRINUSE") {
      throw new Deno.errors.AddrInUse(
        `Port ${port} on ${hostname} is already in use by another program; pick another with --port N ` +
          "(or --port 0 for a free one)",
      );
    }
    throw e;
  }
  url = `http://${hostname}:${server.port}`;
  origins = new Set(["127.0.0.1", "localhost", "[::1]"].map((h) => `http://${h}:${server.port}`));
  return { url, port: server.port, shutdown: server.shutdown };
}

/**
 * An error body for a reset to a task index the game does not have (TextCraft itself would wrap it around), in the
 * protocol's own way of refusing a well-formed request: status 200 with `{"error": ...}`.
 */
function outOfRange(body: ArrayBuffer, tasks: number, title: string): Response | undefined {
  let idx: unknown;
  try {
    idx = JSON.parse(new TextDecoder().decode(body))?.data_idx;
  } catch {
    return undefined; // The game answers malformed JSON itself.
  }
  if (typeof idx !== "number" || (Number.isInteger(idx) && idx >= 0 && idx < tasks)) return undefined;
  const error = `Task index ${idx} is out of range: ${title} has tasks 0 to ${tasks - 1}.`;
  return new Response(JSON.stringify({ error }), { headers: { "content-type": "application/json" } });
}
