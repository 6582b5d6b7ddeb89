// A half-working environment (issue 32): a server that answers but fails a share of its requests must not keep a run
// looping. Abandoned steps are bounded, each is written to metrics.jsonl with why and which server, and past the
// budget the run saves and exits 3 with the server, its errors and the resume command; resumed against a healthy
// server it finishes.
import assert from "node:assert/strict";
import { serveTextCraft } from "../../tasks/textcraft/game/server.ts";
import { SMOKE_MODEL_YAML, SMOKE_RUN } from "../../src/bench/smoke_run.ts";
import { noGpu } from "../no_gpu.ts";
import { tree } from "../env/helpers.ts";
import { cli } from "./cli_run.ts";
import { faultProxy, flaky } from "../../src/bench/fault_proxy.ts";

function budget(dir: string): string[] {
  return [
    `model.tiny=${dir}/tiny.yaml`,
    "model.path=null",
    ...SMOKE_RUN,
    "sft.enabled=false",
    "actor.lr=0.01",
    "trainer.total_steps=3",
    "trainer.test_freq=0",
  ];
}

const lines = (path: string) => Deno.readTextFileSync(path).trim().split("\n").map((l) => JSON.parse(l));

Deno.test({
  name: "a flaky server (most of its steps answer garbage) stops the run with exit 3 after a bounded number of retries",
  ignore: noGpu,
  async fn() {
    const dir = await Deno.makeTempDir();
    await Deno.writeTextFile(`${dir}/tiny.yaml`, SMOKE_MODEL_YAML);
    const server = await serveTextCraft({ port: 0, tree });
    const proxy = faultProxy(server.url, flaky("garbage", 0.9, ["POST /step"]));
    try {
      const run = `${dir}/run`;
      const args = ["--run-dir", run, "--env-url", proxy.url, ...budget(dir)];
      const r = await cli(["train", "textcraft", ...args, "env.max_step_retries=2", "env.max_abandoned_steps=4"]);
      assert.equal(r.code, 3, r.err);
      assert.match(r.err, new RegExp(`${proxy.url}[^;]*not JSON`));
      assert.match(r.err, new RegExp(`resume with: deno task train --resume ${run}`));
      const abandoned = lines(`${run}/metrics.jsonl`).filter((m) => m.phase === "rl_abandoned");
      assert.ok(abandoned.length >= 3 && abandoned.length <= 5, `${abandoned.length} abandoned steps`);
      for (const a of abandoned) {
        assert.ok(a.env_failures > a.episodes / 2);
        assert.match(a.why, /not JSON/);
        assert.ok(a.servers[proxy.url]["not JSON"] > 0, JSON.stringify(a.servers));
      }
      await Deno.stat(`${run}/checkpoints/latest`);
      await assert.rejects(Deno.stat(`${run}/checkpoints/final`));
      proxy.set(() => "pass");
      const resumed = await cli(["train", "--resume", run]);
      assert.equal(resumed.code, 0, resumed.err);
      await Deno.stat(`${run}/checkpoints/final`);
    } finally {
      await proxy.shutdown();
      await server.shutdown();
    }
  },
});

Deno.test({
  name: "an evaluation whose every episode overflowed the prompt limit is an error, not 0%",
  ignore: noGpu,
  async fn() {
    const dir = await Deno.makeTempDir();
    await Deno.writeTextFile(`${dir}/tiny.yaml`, SMOKE_MODEL_YAML);
    const run = `${dir}/run`;
    const r = await cli([
      "train",
      "textcraft",
      "--run-dir",
      run,
      ...budget(dir),
      "trainer.total_steps=1",
      "rollout.max_prompt_length=100",
    ]);
    assert.equal(r.code, 2, r.err);
    assert.match(r.err, /final evaluation played no episode: all 2 .*rollout\.max_prompt_length=100/);
    assert.doesNotMatch(r.out, /Done in/);
    await assert.rejects(Deno.stat(`${run}/checkpoints/final`));
    assert.equal(await Deno.readTextFile(`${run}/evals.jsonl`).catch(() => ""), "");
  },
});
