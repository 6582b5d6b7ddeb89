// A worker cannot make the server publish where the worker may not (issue 59), on a real nats-server with the
// credentials and TLS `cluster up` makes: worker m sends the two requests its credentials allow, `$JS.API.INFO` and
// `$JS.API.STREAM.MSG.GET.KV_crucible`, with the reply subject set to worker b's subject and to the version key's
// subject. Neither answer lands: b's subject in the trajectory stream stays empty and the version key stays the
// learner's; m's own subject is the only one its requests could reach. No GPU.
import assert from "node:assert/strict";
import { prepareAuth } from "../../src/cluster/auth.ts";
import { readCredentials } from "../../src/cluster/credentials.ts";
import {
  type Cluster,
  connectCluster,
  prepareStreams,
  TRAJECTORIES,
  TRAJECTORY_SUBJECT,
} from "../../src/cluster/nats.ts";
import { startNatsServer } from "../../src/cluster/server.ts";
import { localNames } from "../../src/cluster/tls.ts";
import { latestVersion, publishVersion } from "../../src/cluster/weights.ts";
import { noNats } from "./helpers.ts";

const enc = new TextEncoder();

/** Messages the trajectory stream holds on `subject`. */
async function onSubject(learner: Cluster, subject: string): Promise<number> {
  const info = await learner.jsm.streams.info(TRAJECTORIES, { subjects_filter: subject });
  return info.state.subjects?.[subject] ?? 0;
}

Deno.test({
  name: "cluster isolation: a worker's requests with another's reply subject land nowhere (the issue's two requests)",
  ignore: noNats,
  async fn() {
    const dir = await Deno.makeTempDir();
    const data = `${dir}/data`;
    const auth = await prepareAuth(data, { workers: ["b", "m"], tlsNames: localNames("0.0.0.0") });
    const server = await startNatsServer({ dataDir: data, host: "0.0.0.0", port: 0, auth });
    const url = server.url.replace("0.0.0.0", "127.0.0.1");
    const creds = (name: string) => readCredentials(`${data}/creds/${name}.creds`);
    let learner: Cluster | undefined, m: Cluster | undefined;
    try {
      learner = await connectCluster(url, { creds: await creds("learner") });
      await prepareStreams(learner, { ackWaitSeconds: 30, maxDeliver: 3 });
      await learner.kv.put("run", JSON.stringify({ id: "r1" }));
      const published = await publishVersion(learner, 0, new Map([["w", { shape: [2], data: new Float32Array(2) }]]));

      m = await connectCluster(url, { creds: await creds("worker-m") });
      const b = `${TRAJECTORY_SUBJECT}.b`;
      const get = enc.encode(JSON.stringify({ last_by_subj: "$KV.crucible.run" }));
      for (let i = 0; i < 12; i++) m.nc.publish("$JS.API.INFO", new Uint8Array(0), { reply: b });
      m.nc.publish("$JS.API.STREAM.MSG.GET.KV_crucible", get, { reply: "$KV.crucible.version" });
      // Its own subject is the one place its answers could go, and it may publish there anyway.
      m.nc.publish("$JS.API.INFO", new Uint8Array(0), { reply: `${TRAJECTORY_SUBJECT}.m` });
      await m.nc.flush();
      await new Promise((r) => setTimeout(r, 1000));

      const landed = await onSubject(learner, b);
      assert.deepEqual(await latestVersion(learner), published, "the version key is no longer the learner's");
      assert.equal(landed, 0, "an answer of the server landed on worker b's subject");
      assert.deepEqual(await latestVersion(learner), published, "the version key is no longer the learner's");
      // The requests themselves were answered (they are what a worker needs), only not where m asked.
      assert.equal((await m.jsm.getAccountInfo()).streams >= 4, true);
    } finally {
      await m?.close();
      await learner?.close();
      await server.stop();
    }
    await Deno.remove(dir, { recursive: true });
  },
});
