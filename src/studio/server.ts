/**
 * The studio server: one page where a person trains an agent on TextCraft in their browser, with Crucible's own
 * training code bundled for it. Everything the page loads comes from here (Deno.serve on loopback), and nothing of
 * the training runs here: the server hands out files.
 *
 *   GET  /                 the page (page.html) and GET /studio.js, its script (app.ts bundled for the browser, with
 *                          the two Node built-ins the bundle names mapped to stand-ins, import_map.json)
 *   GET  /charts.js        the report's chart code (uPlot and src/report/charts.js) and GET /charts.css its style
 *   GET  /studio/setup     what the page starts from: the config's name and the overrides given on the command
 *                          line, the folders to load (the model, and a run folder to resume) and, when a command
 *                          drives the page, what to run
 *   GET  /files/<path>     a file of those folders, by the path the page's file tree gives it (the one it has here)
 *   POST /studio/report    the page's progress lines and its final numbers, for the command that drives it
 *                          (JSON, same origin only)
 */
import { chartsOnlyScript, reportStyle } from "../report/assets.ts";
import { bundleForBrowser } from "../play/server.ts";
import page from "./page.html" with { type: "text" };

/** A folder the page loads into its file tree, at the same path: its files by name relative to it. */
export interface Mount {
  /** Its path as the command was given it (relative to the working folder, or absolute). */
  path: string;
  /** Its files, relative to `path`, with their sizes in bytes. */
  files: { name: string; size: number }[];
}

/** What the page starts from (GET /studio/setup). */
export interface StudioSetup {
  /** The shipped config the page's settings start from (configs/<name>.yaml). */
  config: string;
  /** Overrides given on the command line, applied before the page's own settings. */
  overrides: string[];
  /** The model folder (config model.path); with `resume`, the run's own. */
  model: string;
  /** The folders to load: the model, and with `resume` the run folder. */
  mounts: Mount[];
  /** A run folder to continue from its latest checkpoint. */
  resume?: string;
  /**
   * Set when a command drives the page (`deno task studio --headless`): start at once (`steps` GRPO steps, the
   * config's when 0; a run to resume continues), report to the server.
   */
  auto?: { steps: number };
}

/** Options of {@linkcode serveStudio}. */
export interface StudioOptions {
  setup: StudioSetup;
  /** Called with each JSON object the page posts to /studio/report. */
  onReport?: (report: Record<string, unknown>) => void;
  /** Default 8000; 0 picks a free port. */
  port?: number;
  /** Default 127.0.0.1. */
  hostname?: string;
}

/** A running studio server. */
export interface StudioServer {
  url: string;
  port: number;
  shutdown(): Promise<void>;
}

const ROOT = new URL("../../", import.meta.url);
const APP = new URL("src/studio/app.ts", ROOT).pathname;
const IMPORT_MAP = new URL("src/studio/import_map.json", ROOT).pathname;
const LOCK = new URL("deno.lock", ROOT).pathname;

/** The page's script: app.ts and the whole training path it imports, bundled for the browser. */
export async function bundleStudio(): Promise<string> {
  return await bundleForBrowser(APP, { what: "deno task studio", lock: LOCK, importMap: IMPORT_MAP });
}

/**
 * The files of a folder the page may load, recursively (a run folder has checkpoints/), skipping what the page never
 * reads: other checkpoints than `keep` names, and half-written saves.
 */
export async function mountOf(path: string, keep?: (name: string) => boolean): Promise<Mount> {
  const files: Mount["files"] = [];
  const walk = async (rel: string) => {
    for await (const e of Deno.readDir(rel ? `${path}/${rel}` : path)) {
      const name = rel ? `${rel}/${e.name}` : e.name;
      if (/\.(tmp|old)-/.test(e.name) || (keep && !keep(name))) continue;
      if (e.isDirectory) await walk(name);
      else if (e.isFile) files.push({ name, size: (await Deno.stat(`${path}/${name}`)).size });
    }
  };
  try {
    await walk("");
  } catch (e) {
    if (e instanceof Deno.errors.NotFound) throw new Deno.errors.NotFound(`${path} does not exist`);
    throw e;
  }
  return { path: path.replace(/\/+$/, ""), files: files.sort((a, b) => (a.name < b.name ? -1 : 1)) };
}

const TYPES: Record<string, string> = {
  js: "text/javascript; charset=utf-8",
  css: "text/css; charset=utf-8",
  json: "application/json",
  html: "text/html; charset=utf-8",
};

function response(body: BodyInit, type: string): Response {
  return new Response(body, { headers: { "content-type": type, "cache-control": "no-store" } });
}

/**
 * Starts the studio server; resolves once it listens (after bundling the page's script, a few seconds). A port in
 * use is a clear error.
 *
 * @example
 * ```ts
 * const model = await mountOf("models/crucible-base");
 * const setup = { config: "textcraft_smoke", overrides: [], model: model.path, mounts: [model] };
 * const server = await serveStudio({ setup, port: 0 });
 * console.log(`open ${server.url}`);
 * ```
 */
export async function serveStudio(o: StudioOptions): Promise<StudioServer> {
  const app = await bundleStudio();
  const hostname = o.hostname ?? "127.0.0.1";
  const files = new Map<string, string>();
  for (const m of o.setup.mounts) for (const f of m.files) files.set(`${m.path}/${f.name}`, `${m.path}/${f.name}`);
  const fixed: Record<string, () => Response> = {
    "/": () => response(page, TYPES.html),
    "/studio.js": () => response(app, TYPES.js),
    "/charts.js": () => response(chartsOnlyScript, TYPES.js),
    "/charts.css": () => response(reportStyle, TYPES.css),
    "/studio/setup": () => response(JSON.stringify(o.setup), TYPES.json),
  };
  let origins = new Set<string>();
  const handler = async (req: Request): Promise<Response> => {
    const path = decodeURIComponent(new URL(req.url).pathname);
    if (req.method === "POST" && path === "/studio/report") return await report(req);
    if (req.method !== "GET") return new Response("Method Not Allowed", { status: 405 });
    if (fixed[path]) return fixed[path]();
    const file = path.startsWith("/files/") ? files.get(path.slice("/files/".length)) : undefined;
    if (!file) return new Response("Not Found", { status: 404 });
    try {
      return response(await Deno.readFile(file), "application/octet-stream");
    } catch {
      return new Response(`${file} could not be read`, { status: 404 });
    }
  };
  // Reports come from the page only: same origin, JSON.
  const report = async (req: Request): Promise<Response> => {
    const origin = req.headers.get("origin");
    if (origin !== null && !origins.has(origin)) return new Response("Forbidden", { status: 403 });
    if (!(req.headers.get("content-type") ?? "").startsWith("application/json")) {
      return new Response("Unsupported Media Type", { status: 415 });
    }
    try {
      o.onReport?.(await req.json());
    } catch {
      return new Response("Bad Request", { status: 400 });
    }
    return new Response(null, { status: 204 });
  };
  let server: Deno.HttpServer;
  const port = o.port ?? 8000;
  try {
    server = Deno.serve({ port, hostname, onListen: () => {} }, handler);
  } catch (e) {
    if (e instanceof Deno.errors.AddrInUse) {
      throw new Deno.errors.AddrInUse(
        `Port ${port} on ${hostname} is already in use by another program; pick another with --port N ` +
          "(or --port 0 for a free one)",
      );
    }
    throw e;
  }
  const bound = server.addr as Deno.NetAddr;
  origins = new Set([hostname, "127.0.0.1", "localhost", "[::1]"].map((h) => `http://${h}:${bound.port}`));
  return { url: `http://${hostname}:${bound.port}`, port: bound.port, shutdown: () => server.shutdown() };
}
