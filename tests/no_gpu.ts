/**
 * The one mark for tests that need a WebGPU adapter: `Deno.test({ name, ignore: noGpu, fn })`.
 * CI has one (Mesa's lavapipe); tests of references, config, RL math and HTTP run without.
 */
import { getGpu, type Gpu, hasAdapter } from "../src/gpu/device.ts";

/** True when no WebGPU adapter can be found. */
export const noGpu: boolean = !(await hasAdapter());

/** The shared GPU for tests. */
export function testGpu(): Promise<Gpu> {
  return getGpu();
}
