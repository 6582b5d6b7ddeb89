/**
 * Headless Chromium for `deno task studio --headless`: the system's Chromium (or Chrome) opens the studio page with
 * WebGPU on its SwiftShader adapter (a CPU rasteriser, so it runs on any machine), with a fresh profile and no
 * network services, and is ended when the page has posted its numbers. No browser driver: the page itself posts
 * what it did to the studio server (/studio/report).
 */

/** Where Chromium is looked for, in order, after $CHROMIUM. */
export const CHROMIUM_CANDIDATES = [
  "/usr/bin/chromium",
  "/usr/bin/chromium-browser",
  "/usr/bin/google-chrome",
  "/usr/bin/google-chrome-stable",
  "/Applications/Google Chrome.app/Contents/MacOS/Google Chrome",
  "/Applications/Chromium.app/Contents/MacOS/Chromium",
];

/** The flags that give a headless Chromium a WebGPU adapter with no GPU: SwiftShader's, measured here. */
export const WEBGPU_FLAGS = ["--enable-unsafe-webgpu", "--use-webgpu-adapter=swiftshader"];

/** The Chromium to run: $CHROMIUM, else the first candidate that exists; a clear error naming the fix otherwise. */
export function chromiumPath(): string {
  const own = Deno.env.get("CHROMIUM");
  for (const p of own ? [own] : CHROMIUM_CANDIDATES) {
    try {
      if (Deno.statSync(p).isFile) return p;
    } catch {
      // try the next
    }
  }
  throw new Deno.errors.NotFound(
    own
      ? `CHROMIUM=${own} names no file; point it at a Chromium or Chrome binary`
      : `--headless runs the page in Chromium, and none was found at ${CHROMIUM_CANDIDATES.join(", ")}: install ` +
        "it (Debian: apt-get install -y chromium) or set CHROMIUM to a Chromium or Chrome binary",
  );
}

/** A headless Chromium showing one page. */
export interface HeadlessBrowser {
  /** Ends the browser and removes its profile. */
  close(): Promise<void>;
  /** Resolves with the browser's exit status if it ends on its own. */
  exited: Promise<Deno.CommandStatus>;
}

/**
 * Opens `url` in a headless Chromium with WebGPU on SwiftShader (`flags` replace WEBGPU_FLAGS).
 *
 * @example
 * ```ts
 * const browser = await openHeadless("http://127.0.0.1:8000/");
 * await browser.close();
 * ```
 */
export async function openHeadless(url: string, flags: readonly string[] = WEBGPU_FLAGS): Promise<HeadlessBrowser> {
  const profile = await Deno.makeTempDir({ prefix: "crucible-studio-chromium-" });
  const root = Deno.uid?.() === 0;
  const child = new Deno.Command(chromiumPath(), {
    args: [
      "--headless=new",
      // Chromium refuses to run as root with its sandbox; a page from our own loopback server is all it loads.
      ...(root ? ["--no-sandbox"] : []),
      `--user-data-dir=${profile}`,
      "--no-first-run",
      "--disable-background-networking",
      "--disable-component-update",
      "--disable-sync",
      ...flags,
      url,
    ],
    stdin: "null",
    stdout: "null",
    stderr: "null",
  }).spawn();
  let closed = false;
  return {
    exited: child.status,
    async close() {
      if (!closed) {
        closed = true;
        try {
          child.kill("SIGTERM");
        } catch {
          // already gone
        }
        await child.status;
      }
      await Deno.remove(profile, { recursive: true }).catch(() => {});
    },
  };
}
