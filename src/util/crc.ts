/**
 * Reflected table-driven CRC-32s, the one loop behind ZIP's CRC-32 (the studio's checkpoint download) and TFRecord's
 * CRC-32C (the TensorBoard event files). Written here because no kept library does both without a build step and
 * each is ten lines.
 *
 * @example
 * ```ts
 * const crc32 = reflectedCrc32(0xedb88320);
 * crc32(new TextEncoder().encode("123456789")); // 0xcbf43926
 * ```
 */

/** The CRC-32 of reflected polynomial `poly` (init and final xor 0xFFFFFFFF) as a function of the bytes. */
export function reflectedCrc32(poly: number): (bytes: Uint8Array) => number {
  const table = new Uint32Array(256);
  for (let n = 0; n < 256; n++) {
    let c = n;
    for (let k = 0; k < 8; k++) c = c & 1 ? poly ^ (c >>> 1) : c >>> 1;
    table[n] = c >>> 0;
  }
  return (bytes) => {
    let c = 0xffffffff;
    for (let i = 0; i < bytes.length; i++) c = table[(c ^ bytes[i]) & 0xff] ^ (c >>> 8);
    return (c ^ 0xffffffff) >>> 0;
  };
}
