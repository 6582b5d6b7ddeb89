/**
 * A ZIP archive of files stored as they are (method 0, no compression: safetensors hardly compress), so the studio
 * page can hand a checkpoint folder to the browser's download as one file that every system unpacks. One folder
 * entry holds the files, so the archive unpacks into a folder of that name. Sizes stay below 4 GiB (no ZIP64): the
 * page refuses more with a RangeError.
 */
import { reflectedCrc32 } from "../util/crc.ts";

/** CRC-32 (ISO 3309, as ZIP and gzip use it) of `bytes`. */
export const crc32: (bytes: Uint8Array) => number = reflectedCrc32(0xedb88320);

/** MS-DOS date and time of `d` (2-second resolution), as ZIP headers hold them. */
function dosTime(d: Date): { time: number; date: number } {
  return {
    time: (d.getHours() << 11) | (d.getMinutes() << 5) | Math.floor(d.getSeconds() / 2),
    date: (Math.max(0, d.getFullYear() - 1980) << 9) | ((d.getMonth() + 1) << 5) | d.getDate(),
  };
}

/**
 * A stored ZIP of `files` (name → bytes) under the folder `folder`.
 *
 * @example
 * ```ts
 * const zip = zipFolder("final", new Map([["config.json", new TextEncoder().encode("{}")]]));
 * // unzip -l: final/ and final/config.json
 * ```
 */
export function zipFolder(folder: string, files: ReadonlyMap<string, Uint8Array>, when = new Date()): Uint8Array {
  const enc = new TextEncoder(), { time, date } = dosTime(when);
  const entries: { name: string; data: Uint8Array }[] = [{ name: `${folder}/`, data: new Uint8Array(0) }];
  for (const [name, data] of [...files].sort(([a], [b]) => (a < b ? -1 : 1))) {
    entries.push({ name: `${folder}/${name}`, data });
  }
  const total = entries.reduce((n, e) => n + 76 + 2 * enc.encode(e.name).length + e.data.length, 22);
  if (total >= 0xffffffff) throw new RangeError(`The folder ${folder} is ${total} bytes, past a ZIP's 4 GiB`);
  const out = new Uint8Array(total), view = new DataView(out.buffer);
  let at = 0;
  const central: { name: Uint8Array; crc: number; size: number; offset: number }[] = [];
  for (const e of entries) {
    const name = enc.encode(e.name), crc = crc32(e.data), offset = at;
    // Local file header: signature, version 2.0, flags (bit 11: UTF-8 names), method 0 (stored), time, date, CRC,
    // sizes, name length, no extra field.
    view.setUint32(at, 0x04034b50, true);
    view.setUint16(at + 4, 20, true);
    view.setUint16(at + 6, 0x0800, true);
    view.setUint16(at + 8, 0, true);
    view.setUint16(at + 10, time, true);
    view.setUint16(at + 12, date, true);
    view.setUint32(at + 14, crc, true);
    view.setUint32(at + 18, e.data.length, true);
    view.setUint32(at + 22, e.data.length, true);
    view.setUint16(at + 26, name.length, true);
    view.setUint16(at + 28, 0, true);
    out.set(name, at + 30);
    out.set(e.data, at + 30 + name.length);
    at += 30 + name.length + e.data.length;
    central.push({ name, crc, size: e.data.length, offset });
  }
  const start = at;
  for (const c of central) {
    const dir = c.name[c.name.length - 1] === 0x2f;
    view.setUint32(at, 0x02014b50, true);
    view.setUint16(at + 4, (3 << 8) | 20, true); // made by: Unix, 2.0 (so the modes below are read)
    view.setUint16(at + 6, 20, true);
    view.setUint16(at + 8, 0x0800, true);
    view.setUint16(at + 10, 0, true);
    view.setUint16(at + 12, time, true);
    view.setUint16(at + 14, date, true);
    view.setUint32(at + 16, c.crc, true);
    view.setUint32(at + 20, c.size, true);
    view.setUint32(at + 24, c.size, true);
    view.setUint16(at + 28, c.name.length, true);
    view.setUint16(at + 30, 0, true); // extra
    view.setUint16(at + 32, 0, true); // comment
    view.setUint16(at + 34, 0, true); // disk
    view.setUint16(at + 36, 0, true); // internal attributes
    view.setUint32(at + 38, ((dir ? 0o40755 : 0o100644) << 16) | (dir ? 0x10 : 0), true);
    view.setUint32(at + 42, c.offset, true);
    out.set(c.name, at + 46);
    at += 46 + c.name.length;
  }
  // End of central directory: one disk, the entry counts, the directory's size and offset, no comment.
  view.setUint32(at, 0x06054b50, true);
  view.setUint16(at + 8, central.length, true);
  view.setUint16(at + 10, central.length, true);
  view.setUint32(at + 12, at - start, true);
  view.setUint32(at + 16, start, true);
  return out;
}
