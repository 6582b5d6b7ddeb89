// A half-working environment (issue 32): a server that answers but fails a share of its requests must not keep a run
// looping. Abandoned steps are bounded, each is written to metrics.jsonl with why and which server, and past the
// budget the run saves and exits 3 with the server, its errors and the resume command; resumed against a healthy
// server it finishes.
import assert from "node:assert/strict";
import { serveTextCraft } from "../../tasks/textcraft/game/server.ts";
import { SMOKE_MODEL_YAML } from "../../bench/smoke_run.ts";
import { flakyBudget } from "../../bench/faults_flaky.ts";
import { noGpu } from "../no_gpu.ts";
import { tree } from "../env/helpers.ts";
import { runCli } from "../subprocess.ts";
import { faultProxy, flaky } from "../../bench/fault_proxy.ts";

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
      const args = ["--run-dir", run, "--env-url", proxy.url, ...flakyBudget(dir)];
      const r = await runCli(["train", "textcraft", ...args, "env.max_step_retries=2", "env.max_abandoned_steps=4"]);
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
      const resumed = await runCli(["train", "--resume", run]);
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
    const r = await runCli([
      "train",
      "textcraft",
      "--run-dir",
      run,
      ...flakyBudget(dir),
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

/** A server that goes down and comes back until stopped: its URL, and how many times it came back. */
interface Flapper {
  url: string;
  cycles(): number;
  stop(): Promise<void>;
}

/** Killed and restarted on its port, as a supervisor would: connections refused while down. */
async function killedAndRestarted(): Promise<Flapper> {
  let server = await serveTextCraft({ port: 0, tree });
  const port = server.port, url = server.url;
  let running = true, cycles = 0;
  const loop = (async () => {
    while (running) {
      await new Promise((r) => setTimeout(r, 600));
      await server.shutdown();
      await new Promise((r) => setTimeout(r, 600));
      server = await serveTextCraft({ port, tree });
      cycles++;
    }
  })();
  return {
    url,
    cycles: () => cycles,
    stop: async () => {
      running = false;
      await loop;
      await server.shutdown();
    },
  };
}

/**
 * Up, but behind the fault proxy answering 503 to every other run of 3 requests, with env.retries=0: the flapping
 * follows the run's own requests, not the clock, so a fast machine sees it as often as a slow one.
 */
async function answering503(): Promise<Flapper> {
  const server = await serveTextCraft({ port: 0, tree });
  let n = 0, cycles = 0, wasDown = false;
  const proxy = faultProxy(server.url, () => {
    const down = Math.floor(n++ / 3) % 2 === 1;
    if (wasDown && !down) cycles++;
    wasDown = down;
    return down ? "503" : "pass";
  });
  return {
    url: proxy.url,
    cycles: () => cycles,
    stop: async () => {
      await proxy.shutdown();
      await server.shutdown();
    },
  };
}

for (
  const [how, start, extra] of [
    ["killed and restarted", killedAndRestarted, []],
    ["answering 503 half the time (fault proxy, env.retries=0)", answering503, ["env.retries=0"]],
  ] as const
) {
  Deno.test({
    name: `a run against three servers while one is ${how} finishes, counting what the flapping one lost`,
    ignore: noGpu,
    async fn() {
      const dir = await Deno.makeTempDir();
      await Deno.writeTextFile(`${dir}/tiny.yaml`, SMOKE_MODEL_YAML);
      // Two steady servers, each behind a pass-through proxy that counts what it served, and one that flaps.
      const steady = await Promise.all([0, 1].map(() => serveTextCraft({ port: 0, tree })));
      const counted = steady.map((s) => faultProxy(s.url, () => "pass"));
      const flapper = await start();
      try {
        const run = `${dir}/run`;
        const urls = [...counted.map((p) => p.url), flapper.url].flatMap((u) => ["--env-url", u]);
        const args = ["--run-dir", run, ...urls, ...flakyBudget(dir), "trainer.total_steps=4", ...extra];
        const r = await runCli(["train", "textcraft", ...args]);
        assert.equal(r.code, 0, r.err);
        assert.ok(flapper.cycles() >= 2, `the server went down and came back ${flapper.cycles()} times in the run`);
        await Deno.stat(`${run}/checkpoints/final`);
        const m = lines(`${run}/metrics.jsonl`);
        const episodes = lines(`${run}/rollouts.jsonl`).filter((e) => e.phase === "rl");
        const steps = m.filter((l) => l.phase === "rl");
        assert.deepEqual(steps.map((l) => l.step), [1, 2, 3, 4]);
        for (const s of steps) {
          // The counts of a step are its episodes': played, failed, each failure naming the server that failed.
          const mine = episodes.filter((e) => e.step === s.step);
          assert.equal(s.episodes, mine.length);
          assert.equal(s.env_failures, mine.filter((e) => e.finish === "env_failure").length);
        }
        for (const e of episodes.filter((e) => e.finish === "env_failure")) {
          assert.ok(e.error.includes(flapper.url), e.error);
          // A create the flapping server failed went to a steady one: only episodes already on it were lost.
          assert.doesNotMatch(e.error, /^POST \/create/, e.error);
        }
        for (const a of m.filter((l) => l.phase === "rl_abandoned")) {
          assert.deepEqual(Object.keys(a.servers), [flapper.url], JSON.stringify(a.servers));
        }
        for (const p of counted) assert.ok(p.counts.pass > 0, `${p.url} served the run`);
        // The final evaluation (an episode the environment failed is replayed, env.episode_retries) counts its two
        // episodes as played or failed, never both and never neither.
        const final = lines(`${run}/evals.jsonl`).at(-1);
        assert.equal(final.phase, "final");
        assert.equal(final.episodes + final.envFailures, 2, JSON.stringify(final));
      } finally {
        await flapper.stop();
        for (const p of counted) await p.shutdown();
        for (const s of steady) await s.shutdown();
      }
    },
  });
}
