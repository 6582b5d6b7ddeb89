// Hugging Face Hub names through the real @huggingface/hub client, pointed by HF_ENDPOINT at a loopback stand-in
// (hub_server.ts) serving models/crucible-tiny's files: the Python cache layout written (blobs, relative snapshot
// links, refs), a copy already there used without a download, revision pinning, HF_HUB_OFFLINE, an unreachable
// Hub, and one message each for a missing model, a missing revision, a gated model without a token and a cut
// download, which leaves nothing a later run takes for a model and resumes where it was cut.
import assert from "node:assert/strict";
import { cachedSnapshot, HubError, parseHubName, resolveModel } from "../../src/model/hub.ts";
import { loadModelDir } from "../../src/model/model_dir.ts";
import { type FakeRepo, serveHub, sha256 } from "./hub_server.ts";

const TINY = new URL("../../models/crucible-tiny/", import.meta.url).pathname;
const FILES = ["config.json", "generation_config.json", "model.safetensors", "tokenizer.json", "tokenizer_config.json"];
const MAIN = "a".repeat(40), OLD = "b".repeat(40);

async function tinyRepo(extra: Partial<FakeRepo> = {}): Promise<FakeRepo> {
  const files: Record<string, Uint8Array<ArrayBuffer>> = {};
  for (const f of [...FILES, "README.md"]) files[f] = await Deno.readFile(`${TINY}${f}`);
  return { files, refs: { main: MAIN }, ...extra };
}

const ENV = ["HF_HOME", "HF_HUB_CACHE", "HF_ENDPOINT", "HF_TOKEN", "HF_HUB_OFFLINE", "HUGGING_FACE_HUB_TOKEN"];

/** Runs `fn` with a fresh HF_HOME and the stand-in Hub as HF_ENDPOINT; restores the environment after. */
async function withHub(
  repos: Record<string, FakeRepo>,
  fn: (hub: ReturnType<typeof serveHub>, home: string) => Promise<void>,
): Promise<void> {
  const saved = ENV.map((k) => [k, Deno.env.get(k)] as const);
  for (const k of ENV) Deno.env.delete(k);
  const home = await Deno.makeTempDir();
  const hub = serveHub(repos);
  Deno.env.set("HF_HOME", home);
  Deno.env.set("HF_ENDPOINT", hub.url);
  try {
    await fn(hub, home);
  } finally {
    await hub.close();
    for (const [k, v] of saved) v === undefined ? Deno.env.delete(k) : Deno.env.set(k, v);
    await Deno.remove(home, { recursive: true });
  }
}

const downloads = (hub: ReturnType<typeof serveHub>) => hub.requests.filter((r) => r.path.includes("/resolve/"));

async function rejects(p: Promise<unknown>, kind: HubError["kind"], message: RegExp): Promise<HubError> {
  const e = await p.then(() => undefined, (e) => e);
  assert.ok(e instanceof HubError, `expected a HubError, got ${e}`);
  assert.equal(e.kind, kind, e.message);
  assert.match(e.message, message);
  return e;
}

Deno.test("parseHubName takes org/name and org/name@revision, and leaves paths alone", () => {
  assert.deepEqual(parseHubName("Qwen/Qwen2.5-0.5B-Instruct"), {
    repo: "Qwen/Qwen2.5-0.5B-Instruct",
    revision: "main",
  });
  assert.deepEqual(parseHubName("a/b@v1.0"), { repo: "a/b", revision: "v1.0" });
  for (const p of ["./a/b", "../a", "/abs/dir", "a/b/c", "models", "a/..", "runs/x/checkpoints/final"]) {
    assert.equal(parseHubName(p), undefined, p);
  }
});

Deno.test("a Hub name downloads into the Python cache layout with progress, then loads from the cache", async () => {
  await withHub({ "org/tiny": await tinyRepo() }, async (hub, home) => {
    const seen: number[] = [];
    let total = -1;
    const dir = await resolveModel("org/tiny", { start: (t) => (total = t), progress: (d) => seen.push(d) });
    const root = `${home}/hub/models--org--tiny`;
    assert.equal(dir, `${root}/snapshots/${MAIN}`);
    assert.equal(await Deno.readTextFile(`${root}/refs/main`), MAIN);
    // Only what a model needs: no README.
    assert.deepEqual([...Deno.readDirSync(dir)].map((e) => e.name).sort(), FILES);
    for (const f of FILES) {
      const link = await Deno.readLink(`${dir}/${f}`);
      assert.match(link, /^\.\.\/\.\.\/blobs\/[0-9a-f]{40,64}$/, f);
      assert.deepEqual(await Deno.readFile(`${dir}/${f}`), await Deno.readFile(`${TINY}${f}`), f);
    }
    const weights = await Deno.readFile(`${TINY}model.safetensors`);
    assert.equal(await Deno.readLink(`${dir}/model.safetensors`), `../../blobs/${await sha256(weights)}`);
    const size = FILES.reduce((a, f) => a + Deno.statSync(`${TINY}${f}`).size, 0);
    assert.equal(total, size);
    assert.equal(seen[seen.length - 1], size);
    assert.ok(seen.every((v, i) => i === 0 || v >= seen[i - 1]), "progress only moves forward");
    const loaded = await loadModelDir(dir);
    assert.ok(loaded.tokenizer && loaded.tensors.size > 0);

    // Again: the API is asked for the commit, nothing is downloaded.
    const before = downloads(hub).length;
    assert.equal(await resolveModel("org/tiny"), dir);
    assert.equal(downloads(hub).length, before);
    // Offline: no request at all.
    Deno.env.set("HF_HUB_OFFLINE", "1");
    const count = hub.requests.length;
    assert.equal(await resolveModel("org/tiny"), dir);
    assert.equal(hub.requests.length, count);
  });
});

Deno.test("a copy Python's huggingface-cli put in HF_HUB_CACHE is used, and revisions pin snapshots", async () => {
  const repo = await tinyRepo({ refs: { main: MAIN, v1: OLD } });
  await withHub({ "org/tiny": repo }, async (hub, home) => {
    // Python's layout, written by hand: blobs named by etag, relative links, refs/main.
    const cache = `${home}/elsewhere`;
    Deno.env.set("HF_HUB_CACHE", cache);
    const root = `${cache}/models--org--tiny`;
    await Deno.mkdir(`${root}/blobs`, { recursive: true });
    await Deno.mkdir(`${root}/snapshots/${MAIN}`, { recursive: true });
    await Deno.mkdir(`${root}/refs`);
    for (const [k, f] of FILES.entries()) {
      await Deno.copyFile(`${TINY}${f}`, `${root}/blobs/etag${k}`);
      await Deno.symlink(`../../blobs/etag${k}`, `${root}/snapshots/${MAIN}/${f}`);
    }
    await Deno.writeTextFile(`${root}/refs/main`, MAIN);
    assert.equal(await resolveModel("org/tiny"), `${root}/snapshots/${MAIN}`);
    assert.equal(downloads(hub).length, 0, "nothing downloaded: the cache has the commit main points to");
    // A pinned revision: a tag, then a commit, each its own snapshot.
    assert.equal(await resolveModel("org/tiny@v1"), `${root}/snapshots/${OLD}`);
    assert.equal(await Deno.readTextFile(`${root}/refs/v1`), OLD);
    assert.equal(await resolveModel(`org/tiny@${OLD}`), `${root}/snapshots/${OLD}`);
    await rejects(
      resolveModel("org/tiny@nope"),
      "revision",
      /Revision "nope" of org\/tiny does not exist.*org\/tiny@main/,
    );
  });
});

Deno.test("a missing model, a gated one without a token, offline and an unreachable Hub each name the fix", async () => {
  await withHub({ "org/gated": await tinyRepo({ gatedToken: "hf_good" }) }, async (_hub, home) => {
    await rejects(
      resolveModel("org/nosuch"),
      "not_found",
      /Model org\/nosuch was not found.*set HF_TOKEN.*--model DIR/,
    );
    await rejects(resolveModel("org/gated"), "gated", /org\/gated is gated: accept its terms at .*set HF_TOKEN/);
    Deno.env.set("HF_TOKEN", "hf_wrong");
    await rejects(resolveModel("org/gated"), "gated", /the token in HF_TOKEN has no access/);
    Deno.env.set("HF_TOKEN", "not-a-token");
    await rejects(resolveModel("org/gated"), "gated", /HF_TOKEN .* is not a Hugging Face token: those start with hf_/);
    Deno.env.set("HF_TOKEN", "hf_good");
    const dir = await resolveModel("org/gated");
    assert.ok(await cachedSnapshot({ repo: "org/gated", revision: "main" }) === dir);
    // Nothing left behind by the failures that a later run would take for a model.
    assert.equal(await cachedSnapshot({ repo: "org/nosuch", revision: "main" }), undefined);
    assert.ok(!(await Deno.stat(`${home}/hub/models--org--nosuch`).then(() => true, () => false)));

    Deno.env.set("HF_HUB_OFFLINE", "1");
    await rejects(
      resolveModel("org/other"),
      "offline",
      /not in the Hugging Face cache .*HF_HUB_OFFLINE.*huggingface-cli/,
    );
    Deno.env.delete("HF_HUB_OFFLINE");
    // A Hub that does not answer: the cached copy is used (with a note), else the message says what to do.
    const closed = Deno.listen({ hostname: "127.0.0.1", port: 0 });
    const port = (closed.addr as Deno.NetAddr).port;
    closed.close();
    Deno.env.set("HF_ENDPOINT", `http://127.0.0.1:${port}`);
    const notes: string[] = [];
    assert.equal(await resolveModel("org/gated", { note: (n) => notes.push(n) }), dir);
    assert.match(notes.join("\n"), /could not be reached.*using the cached/);
    await rejects(
      resolveModel("org/other"),
      "offline",
      /Could not reach the Hugging Face Hub at http:\/\/127\.0\.0\.1/,
    );
  });
});

Deno.test("a download cut mid-file leaves no model behind and resumes from where it was cut", async () => {
  await withHub({ "org/tiny": await tinyRepo() }, async (hub, home) => {
    hub.cutNext = "model.safetensors";
    const size = Deno.statSync(`${TINY}model.safetensors`).size;
    await rejects(
      resolveModel("org/tiny"),
      "cut",
      /download of model\.safetensors from org\/tiny was cut at .*resume it/,
    );
    const root = `${home}/hub/models--org--tiny`;
    assert.equal(await cachedSnapshot({ repo: "org/tiny", revision: "main" }), undefined);
    assert.ok(!(await Deno.stat(`${root}/snapshots`).then(() => true, () => false)), "no snapshot folder yet");
    const partial = [...Deno.readDirSync(`${root}/blobs`)].filter((e) => e.name.endsWith(".incomplete"));
    assert.equal(partial.length, 1);
    const kept = Deno.statSync(`${root}/blobs/${partial[0].name}`).size;
    assert.ok(kept > 0 && kept < size, `kept ${kept} of ${size} bytes`);

    const notes: string[] = [];
    const dir = await resolveModel("org/tiny", { note: (n) => notes.push(n) });
    assert.match(notes.join("\n"), /Resuming model\.safetensors from/);
    const ranges = downloads(hub).filter((r) => r.path.endsWith("model.safetensors")).map((r) => r.range);
    assert.ok(ranges.includes(`bytes=${kept}-${size - 1}`), `the resumed request asked for the rest: ${ranges}`);
    assert.deepEqual(await Deno.readFile(`${dir}/model.safetensors`), await Deno.readFile(`${TINY}model.safetensors`));
    assert.equal([...Deno.readDirSync(`${root}/blobs`)].filter((e) => e.name.endsWith(".incomplete")).length, 0);
  });
});

Deno.test("a command's --model takes a Hub name (deno task export --model org/tiny)", async () => {
  const { main } = await import("../../src/cli/export.ts");
  await withHub({ "org/tiny": await tinyRepo() }, async (_hub, home) => {
    await main(["--model", "org/tiny", "--out", `${home}/onnx`]);
    assert.ok(Deno.statSync(`${home}/onnx/onnx/model.onnx`).size > 0);
    assert.deepEqual(await Deno.readFile(`${home}/onnx/tokenizer.json`), await Deno.readFile(`${TINY}tokenizer.json`));
  });
});
