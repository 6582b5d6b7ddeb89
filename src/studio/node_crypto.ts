/**
 * `node:crypto` in the studio page (the page's import map names this module for it): the two functions that modules
 * on the training path import for code the page never runs (the environment server's keys, the Hub's download
 * checks). Each throws with its name if it is reached.
 */
function absent(name: string): never {
  throw new Error(`node:crypto's ${name} is not available in the studio page (it runs in a browser)`);
}

/** Absent in the page. */
export function createHash(_algorithm: string): never {
  return absent("createHash");
}

/** Absent in the page. */
export function timingSafeEqual(_a: Uint8Array, _b: Uint8Array): never {
  return absent("timingSafeEqual");
}
