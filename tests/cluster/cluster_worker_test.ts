// A worker against a bad neighbour, on a real nats-server on loopback and no GPU: the stream message id of its
// group is its own (its name and the bytes' SHA-256), so another client's message cannot take its place unnoticed
// (a "duplicate" for a message it never sent is said in its log and the group is played again; its own retry is
// not); and a worker ignores a run or version entry that is not the learner's, saying so, instead of ending.
import assert from "node:assert/strict";
import { encode, type GroupMessage, groupMessageId } from "../../src/cluster/messages.ts";
import { connectCluster, prepareStreams, PROMPT_SUBJECT, TRAJECTORIES } from "../../src/cluster/nats.ts";
import { GroupPublisher } from "../../src/cluster/publish.ts";
import { resolveConfig } from "../../src/config/load.ts";
import { end, spawnCli } from "../subprocess.ts";
import { learnerArgs, natsServer, noNats } from "./helpers.ts";

function group(step: number, seconds = 1): GroupMessage {
  return {
    run: "r1",
    id: `r1-s${step}-g0-r0`,
    step,
    group: 0,
    version: 0,
    worker: "b",
    deliveries: 1,
    seconds: { play: seconds, prefill: 0, decode: 0, env: 0 },
    trajectories: [],
  };
}

Deno.test({
  name: "a worker's group is stored under its own id; one taken by another's message first is said and played again",
  ignore: noNats,
  async fn() {
    const dir = await Deno.makeTempDir();
    const server = await natsServer(dir);
    const cl = await connectCluster(server.url);
    try {
      await prepareStreams(cl, { ackWaitSeconds: 30, maxDeliver: 3 });
      const lines: string[] = [];
      const b = new GroupPublisher(cl, "b", (l) => lines.push(l));
      // What the attacker did: messages under the ids the honest worker would use, sent first. Under the
      // prompt's id (the old scheme) they no longer collide with b's group.
      for (const step of [1, 2]) {
        await cl.js.publish("crucible.trajectories.m", encode({ ...group(step), worker: "m" }), {
          msgID: group(step).id,
        });
      }
      assert.equal(await b.publish(group(1)), true);
      assert.deepEqual(lines, []);
      // b's own id taken first, by a client that knew b's very bytes: the stream calls b's group a duplicate.
      const bytes = encode(group(2));
      await cl.js.publish("crucible.trajectories.m", bytes, { msgID: groupMessageId("b", bytes) });
      assert.equal(await b.publish(group(2)), false);
      assert.equal(lines.length, 1);
      assert.match(lines[0], /group of step 2, group 0 as a duplicate of message b-[0-9a-f]{64}, which this worker/);
      assert.match(lines[0], /never sent.*deno task cluster revoke b.*played again/);
      // Its own group sent again (a retry whose first answer was lost) is stored once, and nothing is said.
      assert.equal(await b.publish(group(3)), true);
      assert.equal(await b.publish(group(3)), true);
      assert.equal(lines.length, 1);
      const held = await cl.jsm.streams.info(TRAJECTORIES, { subjects_filter: "crucible.trajectories.b" });
      assert.equal(held.state.subjects?.["crucible.trajectories.b"], 2, "b's groups of steps 1 and 3, once each");
    } finally {
      await cl.close();
      await server.stop();
    }
    await Deno.remove(dir, { recursive: true });
  },
});

Deno.test({
  name: "a worker ignores a run or version entry that is not the learner's, says so, and keeps waiting",
  ignore: noNats,
  async fn() {
    const dir = await Deno.makeTempDir();
    const server = await natsServer(dir);
    const cl = await connectCluster(server.url);
    const worker = spawnCli(["worker", "--cluster", server.url, "--name", "b"]);
    let exited = false;
    worker.done.then(() => (exited = true));
    const until = async (what: RegExp) => {
      for (let i = 0; i < 600 && !what.test(worker.output()) && !exited; i++) {
        await new Promise((r) => setTimeout(r, 100));
      }
      assert.match(worker.output(), what);
    };
    try {
      await prepareStreams(cl, { ackWaitSeconds: 30, maxDeliver: 3 });
      await cl.kv.put("run", JSON.stringify({ id: "r1" }));
      await until(/ignoring the cluster's run entry \(revision \d+\), which is not one the learner writes \(config:/);
      const args = await learnerArgs(dir);
      const config = resolveConfig({ text: "task: textcraft\n", name: "run.yaml" }, args.slice(1));
      await cl.kv.put("run", JSON.stringify({ id: "r1", config }));
      await until(/Worker b joined run r1/);
      // What the attacker wrote in the version key: the answer of a request, not a version.
      await cl.kv.put("version", JSON.stringify({ type: "io.nats.jetstream.api.v1.stream_msg_get_response" }));
      const prompt = { run: "r1", id: "r1-s1-g0-r0", step: 1, group: 0, groups: 1, task: 0, seeds: [1], minVersion: 0 };
      await cl.js.publish(PROMPT_SUBJECT, new TextEncoder().encode(JSON.stringify({ ...prompt, options: {} })));
      await until(/ignoring the cluster's version entry \(revision \d+\).*\(version: .*\); waiting for the learner's/);
      await new Promise((r) => setTimeout(r, 1000));
      assert.equal(exited, false, worker.output());
      assert.equal(worker.output().split("ignoring the cluster's version entry").length - 1, 1, "said once");
    } finally {
      await end(worker);
      await cl.close();
      await server.stop();
    }
    await Deno.remove(dir, { recursive: true });
  },
});
