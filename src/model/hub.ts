/**
 * Hugging Face Hub names as models: `Qwen/Qwen2.5-0.5B-Instruct` (or `org/name@revision`, a branch, tag or commit)
 * becomes a local directory in the standard Hugging Face cache, the layout Python's `huggingface-cli download` writes
 * and reads: `<cache>/models--org--name/blobs/<etag>`, `snapshots/<commit>/<file>` as relative symlinks to the blobs,
 * `refs/<revision>` holding the commit. A copy already there (from Python or an earlier run) is used without
 * downloading; HF_HOME, HF_HUB_CACHE, HF_ENDPOINT, HF_TOKEN (or the token file `huggingface-cli login` writes) and
 * HF_HUB_OFFLINE are honoured as Python honours them.
 *
 * The Hub's protocol (its API routes, auth, redirects, Xet storage) is `@huggingface/hub`'s (npm, MIT), imported on
 * first use only so that commands given a local directory never fetch it. Its own cache writer downloads a file whole
 * in one request with no progress and no resume, so the cache layout is written here: each blob goes to
 * `blobs/<etag>.incomplete` and resumes from that file's length with a range request, its size (and, for LFS files,
 * its SHA-256) is checked before it is renamed into place, and the snapshot's links are made only once every blob is
 * complete, config.json last. A snapshot counts as a model only when config.json and every weight file are there, so
 * a cut download never passes for one.
 */
import { createHash } from "node:crypto";

/** The pinned package, imported by a specifier held in a variable so only a Hub name fetches it. */
export const HUB_PACKAGE = "npm:@huggingface/hub@2.17.5";

/** The files of a repository a Crucible model needs: configs, tokenizer, chat template, safetensors weights. */
const WANTED = /^[^/]+\.(json|safetensors|jinja)$/;

/** A Hub model name and the revision asked for. */
export interface HubName {
  repo: string;
  revision: string;
}

/** An error whose message names the model, what went wrong and the fix. */
export class HubError extends Error {
  constructor(message: string, readonly kind: "offline" | "not_found" | "revision" | "gated" | "cut" | "other") {
    super(message);
    this.name = "HubError";
  }
}

/**
 * A Hub name, `org/name` or `org/name@revision`; undefined for anything else (a path).
 *
 * @example
 * ```ts
 * parseHubName("Qwen/Qwen2.5-0.5B-Instruct@main"); // { repo: "Qwen/Qwen2.5-0.5B-Instruct", revision: "main" }
 * ```
 */
export function parseHubName(spec: string): HubName | undefined {
  const m = /^([A-Za-z0-9][\w.-]*\/[\w.-]*[A-Za-z0-9_])(?:@([\w.\/-]+))?$/.exec(spec);
  if (!m || spec.startsWith(".") || m[1].includes("..")) return undefined;
  return { repo: m[1], revision: m[2] ?? "main" };
}

/** Python's cache folder: HF_HUB_CACHE, else HF_HOME/hub, else $XDG_CACHE_HOME (or ~/.cache)/huggingface/hub. */
export function hubCacheDir(): string {
  return env("HF_HUB_CACHE") ?? env("HUGGINGFACE_HUB_CACHE") ?? `${hfHome()}/hub`;
}

const env = (k: string) => Deno.env.get(k) || undefined;

function hfHome(): string {
  return env("HF_HOME") ??
    `${env("XDG_CACHE_HOME") ?? `${env("HOME") ?? env("USERPROFILE") ?? "."}/.cache`}/huggingface`;
}

/** HF_TOKEN, else the token `huggingface-cli login` saved in HF_HOME/token. */
async function hubToken(): Promise<string | undefined> {
  const t = Deno.env.get("HF_TOKEN") || Deno.env.get("HUGGING_FACE_HUB_TOKEN");
  if (t) return t.trim();
  return (await Deno.readTextFile(`${hfHome()}/token`).catch(() => "")).trim() || undefined;
}

const isOffline = () => /^(1|on|yes|true)$/i.test(Deno.env.get("HF_HUB_OFFLINE") ?? "");
const endpoint = () => (Deno.env.get("HF_ENDPOINT") || "https://huggingface.co").replace(/\/+$/, "");
const storage = (cache: string, repo: string) => `${cache}/models--${repo.replaceAll("/", "--")}`;
const exists = (p: string) => Deno.stat(p).then(() => true, () => false);

/**
 * Whether a directory holds a loadable model: config.json and its weights (model.safetensors, or the index and
 * every shard it names). A snapshot cut mid-download lacks one of them.
 */
export async function isCompleteModel(dir: string): Promise<boolean> {
  if (!await exists(`${dir}/config.json`)) return false;
  if (await exists(`${dir}/model.safetensors`)) return true;
  try {
    const index = JSON.parse(await Deno.readTextFile(`${dir}/model.safetensors.index.json`));
    const shards = new Set(Object.values(index.weight_map ?? {}) as string[]);
    if (shards.size === 0) return false;
    for (const s of shards) if (!await exists(`${dir}/${s}`)) return false;
    return true;
  } catch {
    return false;
  }
}

/** The complete cached snapshot of a name at its revision (a commit, or a ref the cache knows), if any. */
export async function cachedSnapshot(name: HubName, cache = hubCacheDir()): Promise<string | undefined> {
  const root = storage(cache, name.repo);
  const commit = /^[0-9a-f]{40}$/.test(name.revision)
    ? name.revision
    : (await Deno.readTextFile(`${root}/refs/${name.revision}`).catch(() => "")).trim();
  if (!commit) return undefined;
  const dir = `${root}/snapshots/${commit}`;
  return await isCompleteModel(dir) ? dir : undefined;
}

/** What resolveModel reports while it downloads. */
export interface HubProgress {
  /** Bytes still to fetch in total, once known (0 when everything is cached). */
  start?(totalBytes: number, files: number): void;
  /** Bytes fetched so far (a resumed file counts from where it was cut). */
  progress?(doneBytes: number, file: string): void;
  /** A remark: a cached copy used offline, a resumed file. */
  note?(text: string): void;
}

/**
 * A model argument as a local directory: an existing path is returned as is; a Hub name is found in the cache or
 * downloaded into it. Anything else is returned unchanged, for the loader's own "does not exist" error.
 *
 * @example
 * ```ts
 * const dir = await resolveModel("Qwen/Qwen2.5-0.5B-Instruct"); // .../models--Qwen--Qwen2.5-0.5B-Instruct/snapshots/<commit>
 * ```
 */
export async function resolveModel(spec: string, report: HubProgress = {}): Promise<string> {
  if (await exists(spec)) return spec;
  const name = parseHubName(spec);
  if (!name) return spec;
  try {
    return await fromHub(spec, name, report);
  } catch (e) {
    // A name that could also be a path typed from the wrong folder says so first, as transformers does.
    if (!(e instanceof HubError) || !["not_found", "offline"].includes(e.kind)) throw e;
    const here = spec.startsWith("/") ? spec : `${Deno.cwd()}/${spec}`;
    throw new HubError(`"${spec}" does not exist as a directory (${here}), and as a Hub name: ${e.message}`, e.kind);
  }
}

async function fromHub(spec: string, name: HubName, report: HubProgress): Promise<string> {
  const cache = hubCacheDir();
  const cached = await cachedSnapshot(name, cache);
  if (isOffline()) {
    if (cached) return cached;
    throw new HubError(
      `${spec} is not in the Hugging Face cache (${storage(cache, name.repo)}) and HF_HUB_OFFLINE is set, so it ` +
        `cannot be downloaded. Download it where the network allows (deno task ... --model ${spec}, or ` +
        `huggingface-cli download ${name.repo}) and copy that models--${name.repo.replace("/", "--")} folder into ` +
        `${cache}, or pass a local model directory with --model DIR.`,
      "offline",
    );
  }
  try {
    return await download(name, cache, cached, report);
  } catch (e) {
    if (e instanceof HubError) throw e;
    if (cached) {
      report.note?.(
        `The Hub at ${endpoint()} could not be reached (${(e as Error).message}); using the cached ${cached}`,
      );
      return cached;
    }
    throw new HubError(
      `Could not reach the Hugging Face Hub at ${endpoint()} to download ${spec} (${(e as Error).message}). ` +
        `Check the network (or HF_ENDPOINT), or place the model in ${cache} (huggingface-cli download ${name.repo} ` +
        "elsewhere, then copy its models--* folder) or pass a local directory with --model DIR.",
      "offline",
    );
  }
}

/** An HTTP error of the Hub, with its X-Error-Code header (RepoNotFound, RevisionNotFound, GatedRepo, ...). */
interface Failure {
  status: number;
  code: string;
}

/** The error a failed Hub request means for a user. */
function hubFailure(name: HubName, f: Failure, token: string | undefined): HubError {
  const spec = `${name.repo}${name.revision === "main" ? "" : `@${name.revision}`}`;
  const page = `${endpoint()}/${name.repo}`;
  if (f.code === "RevisionNotFound" || (f.status === 404 && /revision/i.test(f.code))) {
    return new HubError(
      `Revision "${name.revision}" of ${name.repo} does not exist on the Hub. Pass a branch, tag or commit that ` +
        `exists (${page}/tree/main lists them), as --model ${name.repo}@main, or leave the revision off.`,
      "revision",
    );
  }
  if (f.code === "GatedRepo" || (f.status === 403 && !f.code)) {
    return new HubError(
      token
        ? `${name.repo} is gated and the token in HF_TOKEN has no access to it. Accept its terms at ${page} with the ` +
          "account the token belongs to, then run the same command again."
        : `${name.repo} is gated: accept its terms at ${page}, then set HF_TOKEN to a read token of that account ` +
          `(${endpoint()}/settings/tokens) or run huggingface-cli login, and run the same command again.`,
      "gated",
    );
  }
  if (f.code === "RepoNotFound" || f.status === 404 || f.status === 401) {
    return new HubError(
      `Model ${spec} was not found on the Hugging Face Hub (${endpoint()}). Check the name (org/name, as in the ` +
        `model page's address)${token ? "" : "; for a private model set HF_TOKEN"}, or pass a local directory ` +
        "with --model DIR.",
      "not_found",
    );
  }
  return new HubError(`The Hub answered ${f.status} ${f.code} for ${spec}; try again later.`, "other");
}

// deno-lint-ignore no-explicit-any
type HubLib = any;
let lib: Promise<HubLib> | undefined;

interface RemoteFile {
  path: string;
  size: number;
  etag: string;
  sha256?: string;
}

async function download(name: HubName, cache: string, cached: string | undefined, report: HubProgress) {
  const token = await hubToken();
  if (token && !token.startsWith("hf_")) {
    throw new HubError(
      "HF_TOKEN (or the saved login token) is not a Hugging Face token: those start with hf_. Set it to a read " +
        `token from ${endpoint()}/settings/tokens, or unset it for public models.`,
      "gated",
    );
  }
  const hub = await (lib ??= import(HUB_PACKAGE));
  let failure: Failure | undefined;
  // The library keeps only the status of a failed request; the Hub's X-Error-Code tells what failed.
  const watched: typeof fetch = async (input, init) => {
    // API answers are small: a Hub that does not answer in 30 s counts as unreachable (downloads have no limit).
    const api = String(input instanceof Request ? input.url : input).includes("/api/");
    const r = await fetch(input, api && !init?.signal ? { ...init, signal: AbortSignal.timeout(30_000) } : init);
    if (!r.ok) failure = { status: r.status, code: r.headers.get("X-Error-Code") ?? "" };
    return r;
  };
  const common = { hubUrl: endpoint(), accessToken: token, fetch: watched };
  const api = async <T>(f: () => Promise<T>): Promise<T> => {
    failure = undefined;
    try {
      return await f();
    } catch (e) {
      if (failure) throw hubFailure(name, failure, token);
      throw e;
    }
  };
  const info: { sha?: string } = await api(() =>
    hub.modelInfo({ ...common, name: name.repo, revision: name.revision, additionalFields: ["sha"] })
  );
  const commit = String(info.sha);
  const root = storage(cache, name.repo), snapshot = `${root}/snapshots/${commit}`;
  if (cached === snapshot) return cached;
  const files: RemoteFile[] = [];
  await api(async () => {
    for await (const f of hub.listFiles({ ...common, repo: name.repo, revision: commit, recursive: true })) {
      if (f.type !== "file" || !WANTED.test(f.path)) continue;
      files.push({ path: f.path, size: f.lfs?.size ?? f.size, etag: f.lfs?.oid ?? f.oid, sha256: f.lfs?.oid });
    }
  });
  const paths = new Set(files.map((f) => f.path));
  if (!paths.has("config.json") || (!paths.has("model.safetensors") && !paths.has("model.safetensors.index.json"))) {
    throw new HubError(
      `${name.repo} has no config.json and safetensors weights at ${commit.slice(0, 12)}; Crucible reads Hugging ` +
        "Face models in safetensors form (model.safetensors or its shards). Pick a repository that has them.",
      "other",
    );
  }
  await Deno.mkdir(`${root}/blobs`, { recursive: true });
  const todo = [];
  for (const f of files) if (!await exists(`${root}/blobs/${f.etag}`)) todo.push(f);
  const total = todo.reduce((a, f) => a + f.size, 0);
  report.start?.(total, todo.length);
  let done = 0;
  for (const f of todo) {
    const blob = `${root}/blobs/${f.etag}`;
    const onBytes = (n: number) => report.progress?.(done + n, f.path);
    done += await api(() => fetchBlob(hub, { ...common, repo: name.repo, revision: commit }, f, blob, onBytes, report));
  }
  // Every blob is complete: link the snapshot, config.json last, so a snapshot with a config has its weights.
  const order = [...files.filter((f) => f.path !== "config.json"), ...files.filter((f) => f.path === "config.json")];
  for (const f of order) {
    const link = `${snapshot}/${f.path}`;
    await Deno.mkdir(link.slice(0, link.lastIndexOf("/")), { recursive: true });
    await Deno.remove(link).catch(() => {});
    const up = "../".repeat(2 + f.path.split("/").length - 1);
    try {
      await Deno.symlink(`${up}blobs/${f.etag}`, link);
    } catch {
      await Deno.copyFile(`${root}/blobs/${f.etag}`, link); // no symlinks (Windows without developer mode)
    }
  }
  if (name.revision !== commit) {
    await Deno.mkdir(`${root}/refs/${name.revision}`.replace(/\/[^/]+$/, ""), { recursive: true });
    await Deno.writeTextFile(`${root}/refs/${name.revision}`, commit);
  }
  return snapshot;
}

/**
 * Fetches one blob into `<blob>.incomplete`, resuming from its length, checks its size and SHA-256, and renames it
 * into place. Returns the bytes fetched by this call plus those it resumed from.
 */
async function fetchBlob(
  hub: HubLib,
  params: Record<string, unknown>,
  f: RemoteFile,
  blob: string,
  onBytes: (n: number) => void,
  report: HubProgress,
): Promise<number> {
  const part = `${blob}.incomplete`;
  let have = await Deno.stat(part).then((s) => s.size, () => 0);
  if (have > f.size) {
    await Deno.truncate(part, 0);
    have = 0;
  }
  if (have > 0) report.note?.(`Resuming ${f.path} from ${(have / 1e6).toFixed(1)} of ${(f.size / 1e6).toFixed(1)} MB`);
  onBytes(have);
  if (have < f.size) {
    const remote = await hub.downloadFile({ ...params, path: f.path });
    if (!remote) throw new HubError(`${f.path} is listed in ${params.repo} but cannot be downloaded`, "other");
    const file = await Deno.open(part, { append: true, create: true });
    try {
      const stream: ReadableStream<Uint8Array> = have > 0 ? remote.slice(have).stream() : remote.stream();
      for await (const chunk of stream) {
        await writeAll(file, chunk);
        have += chunk.length;
        onBytes(have);
      }
    } catch (e) {
      throw cut(params.repo as string, f, have, part, (e as Error).message ?? String(e));
    } finally {
      file.close();
    }
  }
  if (have !== f.size) throw cut(params.repo as string, f, have, part, `the server sent ${have} bytes`);
  if (f.sha256 && /^[0-9a-f]{64}$/.test(f.sha256) && await sha256File(part) !== f.sha256) {
    await Deno.remove(part);
    throw new HubError(
      `${f.path} of ${params.repo} arrived corrupted (its SHA-256 does not match the Hub's); the partial file was ` +
        "removed, run the same command again to download it afresh.",
      "cut",
    );
  }
  await Deno.rename(part, blob);
  return f.size;
}

function cut(repo: string, f: RemoteFile, have: number, part: string, why: string): HubError {
  return new HubError(
    `The download of ${f.path} from ${repo} was cut at ${(have / 1e6).toFixed(1)} of ${(f.size / 1e6).toFixed(1)} ` +
      `MB (${why}). Run the same command again to resume it; the part so far is kept in ${part}.`,
    "cut",
  );
}

async function writeAll(file: Deno.FsFile, bytes: Uint8Array): Promise<void> {
  for (let at = 0; at < bytes.length;) at += await file.write(bytes.subarray(at));
}

async function sha256File(path: string): Promise<string> {
  const h = createHash("sha256");
  const file = await Deno.open(path);
  for await (const chunk of file.readable) h.update(chunk); // the readable closes the file at its end
  return h.digest("hex");
}
