/**
 * A stand-in for the Hugging Face Hub on loopback, serving the routes `@huggingface/hub` calls with the Hub's
 * answers: `GET /api/models/ORG/NAME/revision/REV` (the commit as `sha`), `GET /api/models/ORG/NAME/tree/REV`
 * (files with git blob ids, LFS sha256 and sizes), `GET /ORG/NAME/resolve/REV/PATH` with byte ranges, and the Hub's
 * errors with their X-Error-Code (RepoNotFound, RevisionNotFound, GatedRepo). It can cut one download mid-body, and
 * records every request so tests see what was fetched.
 */

/** A repository: its files and the commit each ref points to. */
export interface FakeRepo {
  files: Record<string, Uint8Array<ArrayBuffer>>;
  /** ref (branch or tag) -> 40-hex commit. */
  refs: Record<string, string>;
  /** Served only with this bearer token. */
  gatedToken?: string;
}

/** What the server saw and how it behaves. */
export interface FakeHub {
  url: string;
  requests: { path: string; range: string | null }[];
  /** The next full-body request of this file path sends half and breaks the connection. */
  cutNext?: string;
  close(): Promise<void>;
}

const hex = (b: ArrayBuffer) => [...new Uint8Array(b)].map((x) => x.toString(16).padStart(2, "0")).join("");

/** The git blob id of some bytes (the Hub's `oid` for files outside LFS). */
async function gitOid(bytes: Uint8Array<ArrayBuffer>): Promise<string> {
  const head = new TextEncoder().encode(`blob ${bytes.length}\0`);
  const all = new Uint8Array(head.length + bytes.length);
  all.set(head);
  all.set(bytes, head.length);
  return hex(await crypto.subtle.digest("SHA-1", all));
}

export const sha256 = async (bytes: Uint8Array<ArrayBuffer>) => hex(await crypto.subtle.digest("SHA-256", bytes));

const json = (body: unknown, status = 200, code?: string) =>
  new Response(JSON.stringify(body), {
    status,
    headers: { "content-type": "application/json", ...(code ? { "X-Error-Code": code } : {}) },
  });

/** Starts the server on 127.0.0.1, port 0. */
export function serveHub(repos: Record<string, FakeRepo>): FakeHub {
  const hub: FakeHub = { url: "", requests: [], close: () => server.shutdown() };
  const commitOf = (r: FakeRepo, rev: string) => r.refs[rev] ?? (Object.values(r.refs).includes(rev) ? rev : undefined);
  const handler = async (req: Request): Promise<Response> => {
    const url = new URL(req.url);
    hub.requests.push({ path: url.pathname, range: req.headers.get("range") });
    const api = /^\/api\/models\/([^/]+\/[^/]+)\/(revision|tree)\/([^/]+)$/.exec(url.pathname);
    const resolve = /^\/([^/]+\/[^/]+)\/resolve\/([^/]+)\/(.+)$/.exec(url.pathname);
    const name = decodeURIComponent((api ?? resolve)?.[1] ?? "");
    const repo = repos[name];
    // The Hub answers 401 RepoNotFound to an anonymous request for a repository it does not show.
    if (!repo) return json({ error: "Repository not found" }, 401, "RepoNotFound");
    const auth = req.headers.get("authorization");
    if (repo.gatedToken && auth !== `Bearer ${repo.gatedToken}`) {
      return json({ error: `Access to model ${name} is restricted.` }, 401, "GatedRepo");
    }
    const rev = decodeURIComponent(api ? api[3] : resolve![2]);
    const commit = commitOf(repo, rev);
    if (!commit) return json({ error: `Invalid rev id: ${rev}` }, 404, "RevisionNotFound");
    if (api?.[2] === "revision") {
      return json({ _id: "x", id: name, sha: commit, private: false, gated: false, lastModified: "2026-01-01" });
    }
    if (api) {
      const entries = await Promise.all(
        Object.entries(repo.files).map(async ([path, bytes]) => ({
          type: "file",
          path,
          size: bytes.length,
          oid: await gitOid(bytes),
          ...(path.endsWith(".safetensors")
            ? { lfs: { oid: await sha256(bytes), size: bytes.length, pointerSize: 134 } }
            : {}),
        })),
      );
      return json(entries);
    }
    const path = resolve![3];
    const bytes = repo.files[path];
    if (!bytes) return json({ error: "Entry not found" }, 404, "EntryNotFound");
    const etag = path.endsWith(".safetensors") ? await sha256(bytes) : await gitOid(bytes);
    const headers: Record<string, string> = { "ETag": `"${etag}"`, "X-Repo-Commit": commit, "Accept-Ranges": "bytes" };
    const range = /^bytes=(\d+)-(\d*)$/.exec(req.headers.get("range") ?? "");
    const start = range ? Number(range[1]) : 0;
    const end = range && range[2] ? Math.min(Number(range[2]), bytes.length - 1) : bytes.length - 1;
    const body = bytes.subarray(start, end + 1);
    if (range) headers["Content-Range"] = `bytes ${start}-${end}/${bytes.length}`;
    if (hub.cutNext === path && body.length > 1) {
      hub.cutNext = undefined;
      const half = body.subarray(0, Math.floor(body.length / 2));
      // Declares the whole length, sends half, then fails the stream: the client sees the connection break.
      const stream = new ReadableStream<Uint8Array>({
        start(c) {
          c.enqueue(half);
        },
        async pull(c) {
          await new Promise((r) => setTimeout(r, 20));
          c.error(new Error("cut"));
        },
      });
      return new Response(stream, {
        status: range ? 206 : 200,
        headers: { ...headers, "Content-Length": String(body.length) },
      });
    }
    return new Response(body, { status: range ? 206 : 200, headers });
  };
  const server = Deno.serve({ hostname: "127.0.0.1", port: 0, onListen: () => {} }, handler);
  hub.url = `http://127.0.0.1:${server.addr.port}`;
  return hub;
}
