/**
 * Headless Chromium for the tests that look at a page: Debian's chromium (CI installs it, `.ci/setup --tests`), driven
 * over the DevTools protocol by playwright-core, which downloads no browser of its own. A test-only dependency: the
 * import sits here and nowhere under src/. Screenshots go to test-artifacts/ (ignored by git).
 */
// Inline on purpose: a test-only package stays out of deno.json's imports, which the run path resolves.
// deno-lint-ignore no-import-prefix
import { type Browser, chromium as driver, type Page } from "npm:playwright-core@1.65.1";

export type { Page };

const ROOT = new URL("../", import.meta.url).pathname;

/** Where screenshots are kept: `test-artifacts/<name>.png` at the repository root. */
export const ARTIFACTS = `${ROOT}test-artifacts`;

/** Flags that run Debian's Chromium headless here (the driver adds --headless and a fresh profile). */
export const CHROMIUM_FLAGS = [
  "--no-sandbox",
  "--disable-gpu",
  "--disable-background-networking",
  "--disable-component-update",
  "--disable-sync",
  "--no-first-run",
];

const CANDIDATES = ["/usr/bin/chromium", "/usr/bin/chromium-browser", "/usr/bin/google-chrome"];

/** The system Chromium's path; throws with the install command when there is none. */
export function chromiumPath(): string {
  for (const p of CANDIDATES) {
    try {
      Deno.statSync(p);
      return p;
    } catch {
      // try the next
    }
  }
  throw new Error(
    `Chromium is needed to check the report; looked for ${CANDIDATES.join(", ")} (apt-get install -y chromium)`,
  );
}

/** A page and every console error or uncaught exception it raised so far. */
export interface WatchedPage {
  page: Page;
  errors: string[];
}

/**
 * Flags that give headless Chromium WebGPU on its SwiftShader adapter (a CPU rasteriser), measured here: with them
 * `navigator.gpu.requestAdapter()` answers `{vendor: "google", architecture: "swiftshader"}`; nothing more
 * (no `--enable-features=Vulkan`) is needed, and `--disable-gpu` leaves it alone.
 */
export const WEBGPU_FLAGS = ["--enable-unsafe-webgpu", "--use-webgpu-adapter=swiftshader"];

/**
 * Runs `fn` with a headless Chromium (a fresh profile, no network services), then closes it. `flags` are added to
 * CHROMIUM_FLAGS (WEBGPU_FLAGS for a page that computes on WebGPU); `init` is a script run in the page before its
 * own (a browser made to lack an API).
 *
 * @example
 * ```ts
 * await withBrowser(async (open) => {
 *   const { page, errors } = await open("file:///tmp/run/report.html");
 * });
 * ```
 */
export async function withBrowser<T>(
  fn: (open: (url: string, init?: string) => Promise<WatchedPage>) => Promise<T>,
  flags: readonly string[] = [],
): Promise<T> {
  const browser: Browser = await driver.launch({
    executablePath: chromiumPath(),
    headless: true,
    args: [...CHROMIUM_FLAGS, ...flags],
  });
  try {
    return await fn(async (url, init) => {
      const page = await browser.newPage({ viewport: { width: 1280, height: 900 }, acceptDownloads: true });
      if (init) await page.addInitScript(init);
      const errors: string[] = [];
      page.on("console", (m) => {
        if (m.type() === "error") errors.push(m.text());
      });
      page.on("pageerror", (e) => errors.push(String(e)));
      await page.goto(url, { waitUntil: "load" });
      return { page, errors };
    });
  } finally {
    await browser.close();
  }
}

/** Saves a full-page screenshot as `test-artifacts/<name>.png`; returns its path. */
export async function screenshot(page: Page, name: string): Promise<string> {
  const path = `${ARTIFACTS}/${name}.png`;
  await Deno.mkdir(path.slice(0, path.lastIndexOf("/")), { recursive: true });
  await page.screenshot({ path, fullPage: true });
  return path;
}
