// Who may join a cluster and what each member may do, on a real nats-server bound to 0.0.0.0 (reached on loopback)
// with the credentials and TLS `cluster up` makes: a client without credentials, or with another cluster's, cannot
// connect; a worker does everything playing takes but cannot publish weights, keys or prompts, delete or purge a
// stream, publish on another worker's subject or read the trajectories; the learner can; a revoked worker is cut
// off. No GPU.
import assert from "node:assert/strict";
import { addWorker, prepareAuth, readMembers, revokeWorker } from "../../src/cluster/auth.ts";
import { readCredentials } from "../../src/cluster/credentials.ts";
import {
  type Cluster,
  connectCluster,
  prepareStreams,
  PROMPT_SUBJECT,
  PROMPTS,
  TRAJECTORIES,
  TRAJECTORY_SUBJECT,
  WORKERS,
} from "../../src/cluster/nats.ts";
import { reloadMembers, startNatsServer } from "../../src/cluster/server.ts";
import { localNames } from "../../src/cluster/tls.ts";
import { fetchVersion, latestVersion, publishVersion } from "../../src/cluster/weights.ts";
import { end, runCli, spawnCli } from "../subprocess.ts";
import { noNats } from "./helpers.ts";

/** A cluster with credentials for the learner and workers a and b, bound to 0.0.0.0; its loopback URL. */
async function secured(dir: string) {
  const auth = await prepareAuth(`${dir}/data`, { workers: ["a", "b"], tlsNames: localNames("0.0.0.0") });
  const server = await startNatsServer({ dataDir: `${dir}/data`, host: "0.0.0.0", port: 0, auth });
  const url = server.url.replace("0.0.0.0", "127.0.0.1");
  const creds = (name: string) => readCredentials(`${dir}/data/creds/${name}.creds`);
  return { server, url, creds };
}

/** Whether `f` fails (a refused request rejects, or times out unanswered). */
async function refused(f: () => Promise<unknown>): Promise<boolean> {
  try {
    await f();
    return false;
  } catch {
    return true;
  }
}

Deno.test({
  name: "cluster credentials: none, or another cluster's, cannot connect beyond loopback; the members' can",
  ignore: noNats,
  async fn() {
    const dir = await Deno.makeTempDir();
    const { server, url, creds } = await secured(dir);
    try {
      // Our client refuses a URL beyond loopback without credentials, naming the flag.
      const wide = url.replace(
        "127.0.0.1",
        localNames("0.0.0.0").find((n) => /^\d+\.\d+/.test(n) && n !== "127.0.0.1") ?? "10.0.0.1",
      );
      await assert.rejects(connectCluster(wide), /beyond loopback: give this learner its credentials with --creds/);
      // Past that check (loopback URL), the server itself refuses a client without credentials (TLS first).
      await assert.rejects(connectCluster(url), /requires TLS .*: pass --creds FILE/);
      // Another cluster's credentials: its CA does not vouch for this server, nor this server know its keys.
      await prepareAuth(`${dir}/other`, { workers: [], tlsNames: ["127.0.0.1"] });
      const foreign = await readCredentials(`${dir}/other/creds/learner.creds`);
      await assert.rejects(connectCluster(url, { creds: foreign }), /did not prove it is the cluster/);
      await assert.rejects(
        connectCluster(url, { creds: { ...foreign, ca: (await creds("learner")).ca } }),
        /refused the credentials of learner learner/,
      );
      const learner = await connectCluster(url, { creds: await creds("learner") });
      await learner.close();
      // A server at the address that speaks no TLS is not the cluster's, whatever it answers.
      const plain = await startNatsServer({
        dataDir: `${dir}/plain`,
        port: 0,
        auth: { members: await readMembers(`${dir}/data`) },
      });
      try {
        await assert.rejects(connectCluster(plain.url, { creds: await creds("learner") }), /does not speak TLS/);
      } finally {
        await plain.stop();
      }
      // Files hold secrets: mode 0600 in a folder of 0700.
      assert.equal((await Deno.stat(`${dir}/data/creds/worker-a.creds`)).mode! & 0o777, 0o600);
      assert.equal((await Deno.stat(`${dir}/data/creds`)).mode! & 0o777, 0o700);
      assert.equal((await Deno.stat(`${dir}/data/auth/server.key`)).mode! & 0o777, 0o600);
      await Deno.chmod(`${dir}/data/creds/worker-b.creds`, 0o644);
      await assert.rejects(creds("worker-b"), /may be read by other users \(mode 644\).*chmod 600/);
      // The server's files hold no seed.
      const seed = (await creds("worker-a")).seed;
      for (const f of ["nats.conf", "auth.conf", "auth/members.json"]) {
        assert.ok(!(await Deno.readTextFile(`${dir}/data/${f}`)).includes(seed), f);
      }
    } finally {
      await server.stop();
    }
    await Deno.remove(dir, { recursive: true });
  },
});

Deno.test({
  name: "cluster permissions: a worker plays but cannot publish weights or delete a stream; the learner can",
  ignore: noNats,
  async fn() {
    const dir = await Deno.makeTempDir();
    const { server, url, creds } = await secured(dir);
    let learner: Cluster | undefined, worker: Cluster | undefined;
    try {
      learner = await connectCluster(url, { creds: await creds("learner") });
      await prepareStreams(learner, { ackWaitSeconds: 30, maxDeliver: 3 });
      await learner.kv.put("run", JSON.stringify({ id: "r1" }));
      const tensors = new Map([["w", { shape: [2], data: new Float32Array([1, 2]) }]]);
      // Version 0 spans three chunks of the object store, each read by the worker message by message.
      const big = Float32Array.from({ length: 700_000 }, (_, i) => i % 1000);
      await publishVersion(learner, 0, new Map([["w", { shape: [big.length], data: big }]]));
      await learner.js.publish(PROMPT_SUBJECT, new TextEncoder().encode('{"p":1}'), { msgID: "p1" });

      // Everything a worker does while playing.
      worker = await connectCluster(url, { creds: await creds("worker-a") });
      const w = worker;
      assert.equal((await w.kv.get("run"))?.string(), '{"id":"r1"}');
      const info = (await latestVersion(w))!;
      assert.deepEqual((await fetchVersion(w, info)).get("w"), big);
      const consumer = await w.js.consumers.get(PROMPTS, WORKERS);
      const m = await consumer.next({ expires: 2000 });
      assert.equal(m?.string(), '{"p":1}');
      m!.working();
      assert.equal((await w.jsm.consumers.info(PROMPTS, WORKERS)).num_ack_pending, 1);
      await w.js.publish(`${TRAJECTORY_SUBJECT}.a`, new TextEncoder().encode("{}"));
      assert.equal(await m!.ackAck(), true);

      // And nothing beyond it.
      const bytes = new TextEncoder().encode("{}");
      const forbidden: [string, () => Promise<unknown>][] = [
        ["publish weights", () => publishVersion(w, 1, tensors)],
        ["overwrite the version key", () => w.kv.put("version", "{}")],
        ["delete a stream", () => w.jsm.streams.delete(TRAJECTORIES)],
        ["purge a stream", () => w.jsm.streams.purge(PROMPTS)],
        ["make a stream", () => w.jsm.streams.add({ name: "X", subjects: ["x.>"] })],
        ["delete the workers' consumer", () => w.jsm.consumers.delete(PROMPTS, WORKERS)],
        ["publish a prompt", () => w.js.publish(PROMPT_SUBJECT, bytes)],
        ["publish as worker b", () => w.js.publish(`${TRAJECTORY_SUBJECT}.b`, bytes)],
        ["read the trajectories", () => w.js.consumers.get(TRAJECTORIES).then((c) => c.next({ expires: 1000 }))],
        ["deliver weights onto b's subject", () =>
          w.jsm.consumers.add(`OBJ_crucible-weights`, {
            deliver_subject: `${TRAJECTORY_SUBJECT}.b`,
            // deno-lint-ignore no-explicit-any
          } as any)],
      ];
      for (const [what, f] of forbidden) assert.ok(await refused(f), `a worker could ${what}`);
      const after = await connectCluster(url, { creds: await creds("learner") });
      try {
        assert.equal((await latestVersion(after))?.version, 0, "the version stays the learner's");
        assert.equal((await after.jsm.streams.info(TRAJECTORIES)).state.messages, 1, "only a's own group landed");
        // The learner may do all of it.
        await publishVersion(after, 1, tensors);
        await after.jsm.streams.purge(PROMPTS);
        assert.equal(await after.jsm.streams.delete(TRAJECTORIES), true);
      } finally {
        await after.close();
      }
    } finally {
      await worker?.close();
      await learner?.close();
      await server.stop();
    }
    await Deno.remove(dir, { recursive: true });
  },
});

Deno.test({
  name: "cluster members: a worker added while the server runs can join; a revoked one is cut off and refused",
  ignore: noNats,
  async fn() {
    const dir = await Deno.makeTempDir();
    const { server, url, creds } = await secured(dir);
    try {
      const learner = await connectCluster(url, { creds: await creds("learner") });
      await learner.close();
      const path = await addWorker(`${dir}/data`, "c");
      assert.equal(await reloadMembers(`${dir}/data`, await readMembers(`${dir}/data`)), true);
      await new Promise((r) => setTimeout(r, 500));
      const c = await connectCluster(url, { creds: await readCredentials(path) });
      await c.close();
      const a = await creds("worker-a");
      const open = await connectCluster(url, { creds: a });
      await revokeWorker(`${dir}/data`, "a");
      assert.equal(await reloadMembers(`${dir}/data`, await readMembers(`${dir}/data`)), true);
      await new Promise((r) => setTimeout(r, 500));
      await assert.rejects(connectCluster(url, { creds: a }), /refused the credentials of worker a/);
      // Its open connection is cut: nothing it asks is answered any more.
      await assert.rejects(open.jsm.getAccountInfo());
      await open.nc.close();
      await assert.rejects(addWorker(`${dir}/data`, "b"), /a member already/);
      await assert.rejects(addWorker(`${dir}/data`, "b.c"), /letters, digits, - and _/);
    } finally {
      await server.stop();
    }
    await Deno.remove(dir, { recursive: true });
  },
});

Deno.test({
  name: "cluster up --host 0.0.0.0 makes credentials and prints the commands with them; add-worker and revoke",
  ignore: noNats,
  async fn() {
    const dir = await Deno.makeTempDir();
    const data = `${dir}/data`;
    const p = spawnCli(["cluster", "up", "--host", "0.0.0.0", "--port", "0", "--data", data, "--workers", "a"]);
    try {
      let url: string | undefined;
      for (let i = 0; i < 300 && !url; i++) {
        url = /NATS with JetStream at (nats:\/\/\S+)/.exec(p.out())?.[1];
        if (!url) await new Promise((r) => setTimeout(r, 100));
      }
      assert.ok(url, p.output());
      const out = p.out();
      assert.match(out, /Members only, over TLS/);
      assert.ok(out.includes(`deno task train textcraft --cluster ${url} --creds ${data}/creds/learner.creds`), out);
      assert.ok(out.includes(`deno task worker --cluster ${url} --creds ${data}/creds/worker-a.creds`), out);
      assert.ok(!p.err().includes("without credentials"), p.err());
      const local = url.replace(/\/\/[^:]+:/, "//127.0.0.1:");
      const a = await connectCluster(local, { creds: await readCredentials(`${data}/creds/worker-a.creds`) });
      await a.close();
      const add = await runCli(["cluster", "add-worker", "b", "--data", data]);
      assert.equal(add.code, 0, add.err);
      assert.match(add.out, /Worker b's credentials: .*worker-b\.creds \(mode 0600\); the running server has reloaded/);
      await new Promise((r) => setTimeout(r, 500));
      const b = await connectCluster(local, { creds: await readCredentials(`${data}/creds/worker-b.creds`) });
      await b.close();
      const revoke = await runCli(["cluster", "revoke", "b", "--data", data]);
      assert.equal(revoke.code, 0, revoke.err);
      assert.match(revoke.out, /Worker b revoked: its credentials are deleted and its connections closed/);
      assert.equal(await Deno.stat(`${data}/creds/worker-b.creds`).then(() => true, () => false), false);
    } finally {
      await end(p);
    }
    // On loopback without --auth: no credentials, as before, and a note that says so once.
    const q = spawnCli(["cluster", "up", "--port", "0", "--data", `${dir}/open`]);
    try {
      for (let i = 0; i < 300 && !q.err().includes("\n"); i++) await new Promise((r) => setTimeout(r, 100));
      assert.equal(q.err().split("note: no credentials").length - 1, 1, q.output());
    } finally {
      await end(q);
    }
    await Deno.remove(dir, { recursive: true });
  },
});
