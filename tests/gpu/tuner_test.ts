// The autotuner's mechanism without a GPU: speeds are told through an injected timer, the cache is a temporary file.
import assert from "node:assert/strict";
import type { Gpu } from "../../src/gpu/device.ts";
import {
  adapterIdentity,
  adapterKey,
  fastest,
  KERNEL_CACHE_ENV,
  kernelCachePath,
  textHash,
  TUNE_ENV,
  type TuneJob,
  tuneModeFromEnv,
  Tuner,
} from "../../src/gpu/tuner.ts";

/** A stand-in for a device: the tuner reads only the adapter's info, its class and its name. */
function fakeGpu(software: boolean, description = "Some GPU 9000"): Gpu {
  const info = { vendor: "0x10de", architecture: "", device: "0x2335", description } as GPUAdapterInfo;
  return { info, software, name: description } as unknown as Gpu;
}

/** A job whose measurement must never run (the injected timer answers instead). */
function job(candidates: string[], seed: string, measured: string[] = []): TuneJob {
  return {
    candidates,
    seed,
    measure: (c) => {
      measured.push(c);
      return Promise.resolve(1);
    },
  };
}

function told(ms: Record<string, number>, asked: string[] = []) {
  return (c: string) => {
    asked.push(c);
    return Promise.resolve(ms[c]);
  };
}

Deno.test("the tuner picks the faster of two variants whose speeds it is told, and saves the choice", async () => {
  const dir = await Deno.makeTempDir();
  try {
    const cachePath = `${dir}/sub/kernels.json`;
    const asked: string[] = [];
    const t = new Tuner(fakeGpu(false), {
      mode: "on",
      cachePath,
      timer: told({ slow: 2, quick: 1 }, asked),
      log: null,
    });
    const choice = await t.tune("op@1 shape", job(["slow", "quick"], "slow"));
    assert.equal(choice.variant, "quick");
    assert.deepEqual(choice.ms, { slow: 2, quick: 1 });
    assert.deepEqual(asked, ["slow", "quick"]);
    assert.equal(t.choice("op@1 shape"), "quick");
    // Told the other way round, the other wins: the choice follows the speeds, not the order.
    const swapped = new Tuner(fakeGpu(false), { mode: "on", cachePath: null, timer: told({ slow: 1, quick: 2 }) });
    assert.equal((await swapped.tune("k", job(["slow", "quick"], "quick"))).variant, "slow");
    // A second run on the same adapter reads the file and times nothing.
    const measured: string[] = [];
    const again = new Tuner(fakeGpu(false), { mode: "auto", cachePath, log: null });
    assert.equal(again.choice("op@1 shape"), "quick");
    again.request("op@1 shape", () => job(["slow", "quick"], "slow", measured));
    assert.equal(again.pending, 0);
    // Another adapter (another description) shares nothing with it.
    assert.equal(new Tuner(fakeGpu(false, "Other GPU"), { mode: "auto", cachePath }).choice("op@1 shape"), undefined);
    const file = JSON.parse(await Deno.readTextFile(cachePath));
    assert.deepEqual(Object.keys(file.adapters), [adapterKey(adapterIdentity(fakeGpu(false)))]);
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
});

Deno.test("a candidate within the noise margin of the seed keeps the seed; a failed candidate never wins", () => {
  assert.equal(fastest({ seed: 1.0, other: 0.98 }, "seed"), "seed");
  assert.equal(fastest({ seed: 1.0, other: 0.9 }, "seed"), "other");
  assert.equal(fastest({ seed: Infinity, other: 5 }, "seed"), "other");
  assert.equal(fastest({ a: 3, b: 2, c: 1 }, "a"), "c");
});

Deno.test("pending jobs run once at a sync point; a candidate that throws is timed Infinity", async () => {
  const t = new Tuner(fakeGpu(false), { mode: "auto", cachePath: null, log: null });
  let made = 0;
  const make = (): TuneJob => {
    made++;
    return {
      candidates: ["broken", "fine"],
      seed: "broken",
      measure: (c) => c === "broken" ? Promise.reject(new Error("does not build")) : Promise.resolve(3),
    };
  };
  t.request("k", make);
  t.request("k", make);
  assert.equal(t.pending, 1);
  assert.equal(made, 0, "the job's inputs are made when it runs, not when it is filed");
  await t.runPending();
  assert.equal(made, 1);
  assert.equal(t.pending, 0);
  assert.equal(t.choice("k"), "fine");
  assert.equal(t.choices.k.ms.broken, Infinity);
});

Deno.test("auto mode times misses on hardware only; off reads no cache and tunes nothing; clear forgets", async () => {
  const dir = await Deno.makeTempDir();
  try {
    const cachePath = `${dir}/kernels.json`;
    const on = new Tuner(fakeGpu(true), { mode: "on", cachePath, timer: told({ a: 1 }), log: null });
    await on.tune("k", job(["a"], "a"));
    assert.equal(new Tuner(fakeGpu(true), { mode: "auto", cachePath }).tunes, false, "a CPU rasteriser's seeds stand");
    assert.equal(new Tuner(fakeGpu(false), { mode: "auto", cachePath }).tunes, true);
    assert.equal(new Tuner(fakeGpu(true), { mode: "auto", cachePath }).choice("k"), "a", "auto still reads the cache");
    const off = new Tuner(fakeGpu(true), { mode: "off", cachePath });
    assert.equal(off.choice("k"), undefined);
    off.request("k2", () => job(["a"], "a"));
    assert.equal(off.pending, 0);
    on.clear();
    assert.equal(new Tuner(fakeGpu(true), { mode: "auto", cachePath }).choice("k"), undefined);
    // A damaged file is ignored (and rewritten by the next tuning), never an error.
    await Deno.writeTextFile(cachePath, "{not json");
    assert.equal(new Tuner(fakeGpu(true), { mode: "auto", cachePath }).choice("k"), undefined);
    await new Tuner(fakeGpu(true), { mode: "on", cachePath, timer: told({ a: 1 }), log: null }).tune(
      "k",
      job(["a"], "a"),
    );
    assert.equal(JSON.parse(await Deno.readTextFile(cachePath)).version, 1);
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
});

Deno.test("the mode and the cache path come from the environment, with errors that name the bad value", () => {
  const saved = [Deno.env.get(TUNE_ENV), Deno.env.get(KERNEL_CACHE_ENV), Deno.env.get("XDG_CACHE_HOME")];
  try {
    Deno.env.set(TUNE_ENV, "sometimes");
    assert.throws(() => tuneModeFromEnv(), /CRUCIBLE_TUNE=sometimes is not a tune mode; use auto, on or off/);
    Deno.env.set(TUNE_ENV, "OFF");
    assert.equal(tuneModeFromEnv(), "off");
    Deno.env.delete(TUNE_ENV);
    assert.equal(tuneModeFromEnv(), "auto");
    Deno.env.set(KERNEL_CACHE_ENV, "off");
    assert.equal(kernelCachePath(), null);
    Deno.env.set(KERNEL_CACHE_ENV, "/tmp/x.json");
    assert.equal(kernelCachePath(), "/tmp/x.json");
    Deno.env.delete(KERNEL_CACHE_ENV);
    Deno.env.set("XDG_CACHE_HOME", "/var/cache/me");
    assert.equal(kernelCachePath(), "/var/cache/me/crucible/kernels.json");
  } finally {
    const names = [TUNE_ENV, KERNEL_CACHE_ENV, "XDG_CACHE_HOME"];
    names.forEach((n, i) => saved[i] === undefined ? Deno.env.delete(n) : Deno.env.set(n, saved[i]!));
  }
});

Deno.test("text hashes differ for different sources and are stable", () => {
  assert.equal(textHash("abc"), textHash("abc"));
  assert.notEqual(textHash("abc"), textHash("abd"));
  assert.match(textHash(""), /^[0-9a-f]{8}$/);
});
