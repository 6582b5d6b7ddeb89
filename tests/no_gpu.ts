/**
 * The marks for tests that need a WebGPU adapter, or a feature of one: `Deno.test({ name, ignore: noGpu, fn })`,
 * `ignore: noGpu || noF16`, `ignore: noGpu || noFixedSubgroups`. A test an adapter cannot run reports itself
 * ignored instead of passing without checking. CI has an adapter (Mesa's lavapipe); tests of references, config,
 * RL math and HTTP run without.
 */
import { getGpu, type Gpu, hasAdapter } from "../src/gpu/device.ts";
import { TUNE_ENV } from "../src/gpu/tuner.ts";
import { fixedSubgroupSize } from "../src/ops/wgsl.ts";

// Tests run the seeded kernel choices, never a user's tuned cache, so their results do not depend on the machine's
// history (and the subprocesses they start inherit this); a test of the tuner configures its own.
if (!Deno.env.get(TUNE_ENV)) Deno.env.set(TUNE_ENV, "off");

/** True when no WebGPU adapter can be found. */
export const noGpu: boolean = !(await hasAdapter());

/** The shared test device's features, read once at load where there is an adapter. */
const shared: Gpu | undefined = noGpu ? undefined : await getGpu();

/** True when the device lacks `shader-f16` (f16 storage: KV caches, f16 weights). */
export const noF16: boolean = !shared?.features.f16;

/** True when the device has no subgroups of one fixed size, which the register ("reg") kernels need. */
export const noFixedSubgroups: boolean = !shared || fixedSubgroupSize(shared) === 0;

/** The shared GPU for tests. */
export function testGpu(): Promise<Gpu> {
  return getGpu();
}
