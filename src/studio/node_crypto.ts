/**
 * `node:crypto` in the studio page (the page's import map names this module for it). `createHash("sha256")` with
 * text or bytes in and hex out is what the training path runs in the page (the rollout's state anchors,
 * src/task/anchor.ts), through js-sha256, the same digest as Node's; everything else modules on the training path
 * import is for code the page never runs (the environment server's keys, the Hub's download checks) and throws with
 * its name if it is reached.
 */
// Pinned here, not in deno.json's imports: only the studio page's bundle reaches this module.
// deno-lint-ignore no-import-prefix
import { sha256 } from "npm:js-sha256@0.11.1";

function absent(name: string): never {
  throw new Error(`node:crypto's ${name} is not available in the studio page (it runs in a browser)`);
}

/** What the page's `createHash("sha256")` answers: `update` (chainable) and a hex `digest`. */
export interface PageHash {
  /** Adds text (as UTF-8) or bytes to the digest. */
  update(data: string | Uint8Array): PageHash;
  /** The digest as lower-case hex; any other encoding is absent in the page. */
  digest(encoding: "hex"): string;
}

/** SHA-256 as Node's `createHash("sha256")` gives it, for hex digests; any other algorithm is absent in the page. */
export function createHash(algorithm: string): PageHash {
  if (algorithm !== "sha256") return absent(`createHash("${algorithm}")`);
  const h = sha256.create();
  const hash: PageHash = {
    update(data) {
      h.update(data);
      return hash;
    },
    digest(encoding) {
      return encoding === "hex" ? h.hex() : absent(`digest("${encoding}")`);
    },
  };
  return hash;
}

/** Absent in the page. */
export function timingSafeEqual(_a: Uint8Array, _b: Uint8Array): never {
  return absent("timingSafeEqual");
}
