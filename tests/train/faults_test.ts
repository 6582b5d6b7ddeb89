// Nothing lost, nothing poisoned (issue 18), each on a minimal budget: a run killed outright (SIGKILL) at several
// moments of both phases, mid-save included, resumes to the same final weights as a run never interrupted, with no
// debris and no repeated log line; an outage is waited out and the step redone; diverging settings stop the run
// before anything non-finite is saved; a too-long observation is counted, not fatal; and a run folder is never
// reused without --resume.
import assert from "node:assert/strict";
import { serveTextCraft } from "../../tasks/textcraft/game/server.ts";
import { noGpu } from "../no_gpu.ts";
import { tree } from "../env/helpers.ts";
import { runCli, sha, spawnCli } from "../subprocess.ts";
import { SMOKE_MODEL_YAML } from "../../bench/smoke_run.ts";
import { faultsBudget } from "../../bench/faults.ts";

/** The kill probes' run of `bench faults`, shorter: half its warm start and three steps. */
const budget = (dir: string) => faultsBudget(dir, ["sft.epochs=0.03", "trainer.total_steps=3"]);

const train = (args: string[], env: Record<string, string> = {}) => runCli(["train", "textcraft", ...args], { env });

const finalWeights = (run: string) => sha(`${run}/checkpoints/final/model.safetensors`);

async function noDebris(run: string): Promise<void> {
  for await (const e of Deno.readDir(`${run}/checkpoints`)) {
    assert.ok(!/\.(tmp|old)-/.test(e.name), `debris ${e.name}`);
  }
  const lines = Deno.readTextFileSync(`${run}/metrics.jsonl`).trim().split("\n").map((l) => JSON.parse(l));
  const keys = lines.map((l) => `${l.phase} ${l.step}`);
  assert.deepEqual(keys, [...new Set(keys)], "no metrics line twice");
}

Deno.test({
  name: "a run killed (SIGKILL) during SFT, a rollout, an update, a save, or just after one resumes bit for bit",
  ignore: noGpu,
  async fn() {
    const dir = await Deno.makeTempDir();
    await Deno.writeTextFile(`${dir}/tiny.yaml`, SMOKE_MODEL_YAML);
    const straight = await train(["--run-dir", `${dir}/straight`, ...budget(dir)]);
    assert.equal(straight.code, 0, straight.err);
    const want = await finalWeights(`${dir}/straight`);
    const moments = ["sft step 1", "rl rollout 2", "rl update 2", "written rl-step-000002", "saved sft-final"];
    moments.push("pointed rl-step-000001", "written sft-step-000001");
    for (const [k, moment] of moments.entries()) {
      const run = `${dir}/k${k}`;
      const killed = await train(["--run-dir", run, ...budget(dir)], { CRUCIBLE_KILL_AT: moment });
      assert.equal(killed.signal, "SIGKILL", `${moment}: ${killed.err}`);
      const resumed = await train(["--resume", run]);
      assert.equal(resumed.code, 0, `${moment}: ${resumed.err}`);
      assert.equal(await finalWeights(run), want, `${moment}: final weights differ`);
      await noDebris(run);
    }
  },
});

Deno.test({
  name: "an outage of the environment is waited out and its step redone: the same final weights",
  ignore: noGpu,
  async fn() {
    const dir = await Deno.makeTempDir();
    await Deno.writeTextFile(`${dir}/tiny.yaml`, SMOKE_MODEL_YAML);
    const server = await serveTextCraft({ port: 0, tree });
    let down = false;
    const proxy = Deno.serve({ port: 0, hostname: "127.0.0.1", onListen() {} }, async (req) => {
      if (down) return new Response("Service Unavailable", { status: 503 });
      const url = new URL(req.url);
      const body = req.method === "POST" ? await req.text() : undefined;
      const r = await fetch(`${server.url}${url.pathname}${url.search}`, {
        method: req.method,
        headers: req.headers,
        body,
      });
      return new Response(await r.arrayBuffer(), { status: r.status, headers: r.headers });
    });
    const url = `http://127.0.0.1:${proxy.addr.port}`;
    const args = (run: string) => ["--run-dir", run, "--env-url", url, ...budget(dir), "env.retries=1"];
    try {
      const straight = await train(args(`${dir}/straight`));
      assert.equal(straight.code, 0, straight.err);
      // Down from the first RL rollout (after SFT's evaluation) for 4 s.
      const watch = (async () => {
        for (;;) {
          await new Promise((r) => setTimeout(r, 50));
          const evals = await Deno.readTextFile(`${dir}/out/evals.jsonl`).catch(() => "");
          if (evals.includes('"phase":"sft"')) break;
        }
        down = true;
        await new Promise((r) => setTimeout(r, 4000));
        down = false;
      })();
      const out = await train(args(`${dir}/out`));
      await watch;
      assert.equal(out.code, 0, out.err);
      assert.match(out.out, /the step is not counted/);
      assert.match(out.out, /answers again/);
      assert.equal(await finalWeights(`${dir}/out`), await finalWeights(`${dir}/straight`));
    } finally {
      await proxy.shutdown();
      await server.shutdown();
    }
  },
});

Deno.test({
  name:
    "diverging settings stop the run: betas of 1 refused, a huge learning rate stops it with nothing non-finite saved",
  ignore: noGpu,
  async fn() {
    const dir = await Deno.makeTempDir();
    await Deno.writeTextFile(`${dir}/tiny.yaml`, SMOKE_MODEL_YAML);
    const betas = await train(["--run-dir", `${dir}/b`, ...budget(dir), "actor.betas=[0.9,1.0]"]);
    assert.equal(betas.code, 2);
    assert.match(betas.err, /actor\.betas\.1/);
    // The norm guard rolls back the steps that blow the weights up (trainer.max_rollbacks=3) and stops at the next,
    // before anything is saved.
    const blown = await train(["--run-dir", `${dir}/n`, ...budget(dir), "sft.lr=1e6", "sft.epochs=0.3"]);
    assert.equal(blown.code, 2, blown.out);
    assert.match(
      blown.err,
      /diverged at SFT step 4: one step multiplied the weights' norm.*; 3 diverged steps were rolled back before it[\s\S]*sft\.lr=1000000/,
    );
    await assert.rejects(Deno.stat(`${dir}/n/checkpoints/latest`));
    // With that guard off, the skip guard still stops steps whose gradients are not finite, saving finite weights.
    const huge = await train([
      "--run-dir",
      `${dir}/h`,
      ...budget(dir),
      "sft.lr=1e6",
      "sft.epochs=0.3",
      "trainer.max_norm_growth=1e30",
    ]);
    assert.equal(huge.code, 2, huge.out);
    assert.match(huge.err, /steps in a row were skipped[\s\S]*sft\.lr=1000000/);
    const latest = Deno.readTextFileSync(`${dir}/h/checkpoints/latest`).trim();
    const loaded = await runCli(["generate", "--model", `${dir}/h/checkpoints/${latest}`, "--prompt", "a"]);
    assert.equal(loaded.code, 0, "the saved checkpoint loads: its weights are finite");
  },
});

Deno.test({
  name: "a run folder is not reused without --resume, and a resume without optimizer state needs --fresh-optimizer",
  ignore: noGpu,
  async fn() {
    const dir = await Deno.makeTempDir();
    await Deno.writeTextFile(`${dir}/tiny.yaml`, SMOKE_MODEL_YAML);
    const first = await train(["--run-dir", `${dir}/r`, ...budget(dir), "trainer.total_steps=1"]);
    assert.equal(first.code, 0, first.err);
    const again = await train(["--run-dir", `${dir}/r`, ...budget(dir)]);
    assert.equal(again.code, 2);
    assert.match(again.err, /already holds a run[\s\S]*--resume/);
    const killed = await train(["--run-dir", `${dir}/s`, ...budget(dir)], { CRUCIBLE_KILL_AT: "rl rollout 2" });
    assert.equal(killed.signal, "SIGKILL");
    const latest = Deno.readTextFileSync(`${dir}/s/checkpoints/latest`).trim();
    await Deno.remove(`${dir}/s/checkpoints/${latest}/optimizer.safetensors`);
    const refused = await train(["--resume", `${dir}/s`]);
    assert.equal(refused.code, 2);
    assert.match(refused.err, /optimizer\.safetensors is missing[\s\S]*--fresh-optimizer/);
    const fresh = await train(["--resume", `${dir}/s`, "--fresh-optimizer"]);
    assert.equal(fresh.code, 0, fresh.err);
  },
});

Deno.test({
  name: "SIGTERM and SIGHUP stop a run as Ctrl-C does: the step finishes, a checkpoint is saved, exit code 3",
  ignore: noGpu || Deno.build.os === "windows",
  async fn() {
    const dir = await Deno.makeTempDir();
    await Deno.writeTextFile(`${dir}/tiny.yaml`, SMOKE_MODEL_YAML);
    for (const signal of ["SIGTERM", "SIGHUP"] as const) {
      const run = `${dir}/${signal}`;
      const child = spawnCli(["train", "textcraft", "--run-dir", run, ...budget(dir), "sft.epochs=0.3"]);
      // Signal once the first SFT step is logged.
      for (;;) {
        await new Promise((r) => setTimeout(r, 50));
        if ((await Deno.readTextFile(`${run}/metrics.jsonl`).catch(() => "")).includes('"phase":"sft"')) break;
      }
      child.child.kill(signal);
      const r = await child.done;
      assert.equal(r.code, 3, `${signal}: ${child.err()}`);
      assert.match(child.out(), /Interrupted\. Saved .*Resume with: deno task train --resume/);
      assert.match(Deno.readTextFileSync(`${run}/checkpoints/latest`), /^sft-step-/);
    }
  },
});

Deno.test({
  name: "PPO with a critic runs end to end, saves the critic beside the actor, and resumes bit for bit",
  ignore: noGpu,
  async fn() {
    const dir = await Deno.makeTempDir();
    await Deno.writeTextFile(`${dir}/tiny.yaml`, SMOKE_MODEL_YAML);
    const gae = [...budget(dir), "algorithm.adv_estimator=gae", "critic.lr=0.001"];
    const straight = await train(["--run-dir", `${dir}/straight`, ...gae]);
    assert.equal(straight.code, 0, straight.err);
    const metrics = Deno.readTextFileSync(`${dir}/straight/metrics.jsonl`).trim().split("\n").map((l) => JSON.parse(l));
    assert.ok(metrics.filter((m) => m.phase === "rl").every((m) => Number.isFinite(m.value_loss)));
    await Deno.stat(`${dir}/straight/checkpoints/final/critic.safetensors`);
    const killed = await train(["--run-dir", `${dir}/k`, ...gae], { CRUCIBLE_KILL_AT: "rl update 2" });
    assert.equal(killed.signal, "SIGKILL");
    const resumed = await train(["--resume", `${dir}/k`]);
    assert.equal(resumed.code, 0, resumed.err);
    for (const f of ["model.safetensors", "critic.safetensors"]) {
      assert.equal(
        await sha(`${dir}/k/checkpoints/final/${f}`),
        await sha(`${dir}/straight/checkpoints/final/${f}`),
        f,
      );
    }
  },
});
