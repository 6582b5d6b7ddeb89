/**
 * What the studio page says when something goes wrong, in words a person can act on and never as a stack trace:
 * a browser without WebGPU (which browsers and flags have it), no adapter, a lost device, the GPU out of memory, a
 * model folder that will not load, and any other error by its own message (Crucible's errors name the value and the
 * fix).
 */

/** Where a browser gets WebGPU (the versions that shipped it; later ones may add platforms). */
export const WEBGPU_BROWSERS = "Chrome and Edge 113 or later on Windows, macOS and ChromeOS (121 on Android), " +
  "Safari 26 on macOS and iOS, and Firefox 141 or later on Windows have WebGPU. On Linux, Chrome and Chromium may " +
  "need it switched on: start them with --enable-unsafe-webgpu --enable-features=Vulkan (or, with no GPU, " +
  "--enable-unsafe-webgpu --use-webgpu-adapter=swiftshader), or set chrome://flags/#enable-unsafe-webgpu. " +
  "WebGPU needs a secure page: https, or http on localhost or 127.0.0.1.";

/** The message for a page whose browser has no `navigator.gpu`. */
export function noWebGpuMessage(secure: boolean): string {
  if (!secure) {
    return "This page is not a secure context, so the browser hides WebGPU: open it as http://127.0.0.1:PORT or " +
      "http://localhost:PORT (as deno task studio prints it), or over https.";
  }
  return `This browser has no WebGPU, which the studio trains with. ${WEBGPU_BROWSERS}`;
}

/** The message for a browser that has WebGPU but found no adapter. */
export function noAdapterMessage(): string {
  return "This browser has WebGPU but found no GPU adapter for it: its GPU may be blocked (see chrome://gpu), or " +
    `the browser runs without GPU access. ${WEBGPU_BROWSERS}`;
}

/** What went wrong, by kind, and the words for it. */
export interface Trouble {
  kind: "lost" | "memory" | "model" | "error";
  message: string;
}

/** The message of any thrown value, without its stack. */
export function messageOf(e: unknown): string {
  if (e instanceof Error) return e.message || e.name;
  return String(e);
}

/**
 * Names a failure of the page's run: `lost` is the device's loss info when the device is gone; `loading` names the
 * model folder when the failure happened while loading it.
 *
 * @example
 * ```ts
 * troubleOf(new Error("Out of memory"), {}).kind; // "memory"
 * ```
 */
export function troubleOf(e: unknown, o: { lost?: { reason: string; message: string }; loading?: string }): Trouble {
  const text = messageOf(e);
  if (o.lost) {
    return {
      kind: "lost",
      message: `The GPU device was lost (${o.lost.reason}${o.lost.message ? `: ${o.lost.message}` : ""}), so the ` +
        "run stopped. The checkpoints saved so far are still here: download the latest, or reload the page to " +
        "start again. A lost device comes from the GPU driver restarting, another program taking the GPU, or the " +
        "browser reclaiming it from a background tab.",
    };
  }
  if (/out of memory|outofmemory|allocation failed|exceeds the max buffer size|maxBufferSize/i.test(text)) {
    return {
      kind: "memory",
      message: `The GPU ran out of memory (${text}). Lower the tasks per step or the group size (fewer episodes ` +
        "sampled at once), or close other tabs that use the GPU, and start again.",
    };
  }
  if (o.loading) {
    return { kind: "model", message: `The model folder ${o.loading} could not be loaded: ${text}` };
  }
  return { kind: "error", message: text };
}
