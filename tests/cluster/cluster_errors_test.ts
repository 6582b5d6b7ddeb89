// The cluster's bad inputs and start-up, with a real nats-server on loopback and no GPU: --cluster pointing at
// nothing, a server without JetStream, a worker whose model differs from the learner's, a corrupted weights object,
// and `cluster up` printing a URL that a client can use.
import assert from "node:assert/strict";
import { connectCluster } from "../../src/cluster/nats.ts";
import { fetchVersion, latestVersion, publishVersion } from "../../src/cluster/weights.ts";
import { resolveConfig } from "../../src/config/load.ts";
import { end, spawnCli } from "../subprocess.ts";
import { learnerArgs, natsServer, noNats } from "./helpers.ts";

/** A loopback port nothing listens on. */
function closedPort(): number {
  const l = Deno.listen({ hostname: "127.0.0.1", port: 0 });
  const port = (l.addr as Deno.NetAddr).port;
  l.close();
  return port;
}

Deno.test("train --cluster pointing at nothing: one message naming the URL and how to start a server, exit 2", async () => {
  const dir = await Deno.makeTempDir();
  const url = `nats://127.0.0.1:${closedPort()}`;
  const p = spawnCli(["train", ...await learnerArgs(dir), "--run-dir", `${dir}/run`, "--cluster", url]);
  const s = await p.done;
  assert.equal(s.code, 2, p.output());
  const lines = p.output().trim().split("\n").filter((l) => l.startsWith("error:"));
  assert.equal(lines.length, 1, p.output());
  assert.ok(lines[0].includes(url), lines[0]);
  assert.match(lines[0], /deno task cluster up/);
  assert.equal(await Deno.stat(`${dir}/run/config.yaml`).then(() => true, () => false), false, "no run folder");
  await Deno.remove(dir, { recursive: true });
});

Deno.test("a curriculum (bfcl) on a cluster: train --cluster and a worker name its base run config instead", async () => {
  const url = `nats://127.0.0.1:${closedPort()}`;
  for (const args of [["train", "bfcl", "--cluster", url], ["worker", "bfcl", "--cluster", url]]) {
    const p = spawnCli(args);
    assert.equal((await p.done).code, 2, p.output());
    assert.match(p.output(), /error: .*curriculum.*base run config \(bfcl_single\)/, args[0]);
  }
});

Deno.test({
  name: "a NATS server without JetStream: one message saying so",
  ignore: noNats,
  async fn() {
    const dir = await Deno.makeTempDir();
    const server = await natsServer(dir, { jetstream: false });
    try {
      await assert.rejects(() => connectCluster(server.url), /runs without JetStream.*-js/);
      const p = spawnCli(["worker", "--cluster", server.url]);
      assert.equal((await p.done).code, 2);
      assert.match(p.output(), /error: The NATS server at .* runs without JetStream/);
    } finally {
      await server.stop();
    }
    await Deno.remove(dir, { recursive: true });
  },
});

Deno.test({
  name: "a worker whose model differs from the learner's is refused by name at connect; a corrupted version too",
  ignore: noNats,
  async fn() {
    const dir = await Deno.makeTempDir();
    const server = await natsServer(dir);
    const cl = await connectCluster(server.url);
    try {
      const args = await learnerArgs(dir);
      const config = resolveConfig({ text: "task: textcraft\n", name: "run.yaml" }, args.slice(1));
      await cl.kv.put("run", JSON.stringify({ id: "r1", config }));
      await Deno.writeTextFile(`${dir}/other.yaml`, "hidden_size: 32\n");
      const p = spawnCli(["worker", "--cluster", server.url, ...args, `model.tiny=${dir}/other.yaml`]);
      assert.equal((await p.done).code, 2, p.output());
      assert.match(
        p.output(),
        /error: This worker's model\.tiny is ".*other\.yaml" but the learner's is ".*tiny\.yaml"/,
      );

      // Version 7 published, then its object replaced by other bytes: the hash in KV no longer matches.
      const tensors = new Map([["w", { shape: [3], data: new Float32Array([1, 2, 3]) }]]);
      const info = await publishVersion(cl, 7, tensors);
      assert.deepEqual(await latestVersion(cl), info);
      assert.deepEqual([...(await fetchVersion(cl, info)).get("w")!], [1, 2, 3]);
      const bytes = (await cl.weights.getBlob(info.object))!;
      bytes[bytes.length - 1] ^= 0x40;
      await cl.weights.putBlob({ name: info.object }, bytes);
      await assert.rejects(() => fetchVersion(cl, info), /Policy version 7: .* refusing to sample with corrupted/);
    } finally {
      await cl.close();
      await server.stop();
    }
    await Deno.remove(dir, { recursive: true });
  },
});

Deno.test({
  name: "cluster up starts nats-server with JetStream and prints a URL a client connects to",
  ignore: noNats,
  async fn() {
    const dir = await Deno.makeTempDir();
    const p = spawnCli(["cluster", "up", "--port", "0", "--data", `${dir}/data`]);
    try {
      let url: string | undefined;
      for (let i = 0; i < 300 && !url; i++) {
        url = /NATS with JetStream at (nats:\/\/\S+)/.exec(p.output())?.[1];
        if (!url) await new Promise((r) => setTimeout(r, 100));
      }
      assert.ok(url, p.output());
      const cl = await connectCluster(url);
      await cl.close();
      assert.ok((await Deno.stat(`${dir}/data/jetstream`)).isDirectory);
    } finally {
      await end(p);
    }
    await Deno.remove(dir, { recursive: true });
  },
});
