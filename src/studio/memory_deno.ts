/**
 * The page's `Deno`: the part of Deno's namespace that the training path touches (run folder, checkpoints, model
 * folders, logs, settings read from the environment), over a folder tree held in memory. The studio page installs it
 * before any module of the run starts, so `runTraining`, the checkpoints, `loadModelDir` and the run log run in the
 * browser as they are, not rewritten: the model folder the page loads, the run folder it writes and the checkpoint it
 * offers for download are files of this tree.
 *
 * What the path never reaches in the page (subprocesses, sockets, symlinks) is absent, so a call to it fails with
 * the function's name rather than silently. Paths are POSIX: relative ones resolve against `/` (the page's working
 * folder), `.` and `..` are folded. Files are whole `Uint8Array`s; an open file is a cursor over one, enough for the
 * sequential writes and reads that model folders do.
 */

/** A file or folder of the tree. */
type Entry = { kind: "file"; data: Uint8Array; mtime: Date } | { kind: "dir"; mtime: Date };

/** Deno's error classes that the training path tests with `instanceof`. */
class NotFound extends Error {
  override name = "NotFound";
}
class AlreadyExists extends Error {
  override name = "AlreadyExists";
}
class NotSupported extends Error {
  override name = "NotSupported";
}
class PermissionDenied extends Error {
  override name = "PermissionDenied";
}
class IsADirectory extends Error {
  override name = "IsADirectory";
}
class NotADirectory extends Error {
  override name = "NotADirectory";
}
class DirectoryNotEmpty extends Error {
  override name = "DirectoryNotEmpty";
}

const ERRORS = {
  NotFound,
  AlreadyExists,
  NotSupported,
  PermissionDenied,
  IsADirectory,
  NotADirectory,
  DirectoryNotEmpty,
  // Kinds the path never raises here, so that `instanceof Deno.errors.X` is false rather than a TypeError.
  BadResource: class BadResource extends Error {},
  Busy: class Busy extends Error {},
  Interrupted: class Interrupted extends Error {},
  InvalidData: class InvalidData extends Error {},
  TimedOut: class TimedOut extends Error {},
  WriteZero: class WriteZero extends Error {},
  UnexpectedEof: class UnexpectedEof extends Error {},
  AddrInUse: class AddrInUse extends Error {},
  AddrNotAvailable: class AddrNotAvailable extends Error {},
  ConnectionRefused: class ConnectionRefused extends Error {},
  ConnectionReset: class ConnectionReset extends Error {},
  ConnectionAborted: class ConnectionAborted extends Error {},
  NotConnected: class NotConnected extends Error {},
  BrokenPipe: class BrokenPipe extends Error {},
  Http: class Http extends Error {},
  FilesystemLoop: class FilesystemLoop extends Error {},
  NotCapable: class NotCapable extends Error {},
};

/** Folds `path` into an absolute path with no `.`, `..` or repeated slashes. */
export function normalPath(path: string | URL): string {
  const text = path instanceof URL ? decodeURIComponent(path.pathname) : path;
  const out: string[] = [];
  for (const part of text.split("/")) {
    if (part === "" || part === ".") continue;
    if (part === "..") out.pop();
    else out.push(part);
  }
  return "/" + out.join("/");
}

function parentOf(path: string): string {
  const i = path.lastIndexOf("/");
  return i <= 0 ? "/" : path.slice(0, i);
}

/** A folder tree in memory: what the page's `Deno` reads and writes. */
export class MemoryFiles {
  readonly #entries = new Map<string, Entry>([["/", { kind: "dir", mtime: new Date() }]]);

  /** The entry at `path`, or undefined. */
  entry(path: string | URL): Entry | undefined {
    return this.#entries.get(normalPath(path));
  }

  /** The file at `path`; NotFound (or IsADirectory) otherwise. */
  file(path: string | URL, op: string): Extract<Entry, { kind: "file" }> {
    const p = normalPath(path), e = this.#entries.get(p);
    if (!e) throw new NotFound(`No such file or directory (os error 2): ${op} '${p}'`);
    if (e.kind !== "file") throw new IsADirectory(`Is a directory (os error 21): ${op} '${p}'`);
    return e;
  }

  /** Writes a whole file, creating its folders. */
  put(path: string, data: Uint8Array): void {
    const p = normalPath(path);
    this.mkdir(parentOf(p), true, "write");
    this.#entries.set(p, { kind: "file", data, mtime: new Date() });
  }

  /** A file's bytes, or undefined when there is none. */
  get(path: string): Uint8Array | undefined {
    const e = this.#entries.get(normalPath(path));
    return e?.kind === "file" ? e.data : undefined;
  }

  /** Creates a folder (and, with `recursive`, its parents); an existing folder is fine when recursive. */
  mkdir(path: string | URL, recursive: boolean, op = "mkdir"): void {
    const p = normalPath(path), e = this.#entries.get(p);
    if (e) {
      if (e.kind === "dir" && recursive) return;
      throw new AlreadyExists(`File exists (os error 17): ${op} '${p}'`);
    }
    const parent = this.#entries.get(parentOf(p));
    if (!parent) {
      if (!recursive) throw new NotFound(`No such file or directory (os error 2): ${op} '${p}'`);
      this.mkdir(parentOf(p), true, op);
    } else if (parent.kind !== "dir") throw new NotADirectory(`Not a directory (os error 20): ${op} '${p}'`);
    this.#entries.set(p, { kind: "dir", mtime: new Date() });
  }

  /** The names directly inside folder `path`, sorted. */
  list(path: string | URL): { name: string; isFile: boolean; isDirectory: boolean }[] {
    const p = normalPath(path), e = this.#entries.get(p);
    if (!e) throw new NotFound(`No such file or directory (os error 2): readdir '${p}'`);
    if (e.kind !== "dir") throw new NotADirectory(`Not a directory (os error 20): readdir '${p}'`);
    const prefix = p === "/" ? "/" : `${p}/`, out = [];
    for (const [k, v] of this.#entries) {
      if (k === p || !k.startsWith(prefix) || k.slice(prefix.length).includes("/")) continue;
      out.push({ name: k.slice(prefix.length), isFile: v.kind === "file", isDirectory: v.kind === "dir" });
    }
    return out.sort((a, b) => (a.name < b.name ? -1 : 1));
  }

  /** Every file under folder `path`, by path relative to it. */
  files(path: string): Map<string, Uint8Array> {
    const p = normalPath(path), prefix = p === "/" ? "/" : `${p}/`, out = new Map<string, Uint8Array>();
    for (const [k, v] of this.#entries) {
      if (v.kind === "file" && k.startsWith(prefix)) out.set(k.slice(prefix.length), v.data);
    }
    return out;
  }

  /** Removes a file or folder (a non-empty folder only when recursive). */
  remove(path: string | URL, recursive: boolean): void {
    const p = normalPath(path), e = this.#entries.get(p);
    if (!e) throw new NotFound(`No such file or directory (os error 2): remove '${p}'`);
    const inside = [...this.#entries.keys()].filter((k) => k.startsWith(`${p}/`));
    if (inside.length > 0 && !recursive) throw new DirectoryNotEmpty(`Directory not empty (os error 39): '${p}'`);
    for (const k of inside) this.#entries.delete(k);
    this.#entries.delete(p);
  }

  /** Moves a file or folder; replaces a file or an empty folder at `to`, as rename(2) does. */
  rename(from: string | URL, to: string | URL): void {
    const a = normalPath(from), b = normalPath(to), e = this.#entries.get(a);
    if (!e) throw new NotFound(`No such file or directory (os error 2): rename '${a}' -> '${b}'`);
    const target = this.#entries.get(b);
    if (target?.kind === "dir" && this.list(b).length > 0) {
      throw new DirectoryNotEmpty(`Directory not empty (os error 39): rename '${a}' -> '${b}'`);
    }
    if (!this.#entries.get(parentOf(b))) {
      throw new NotFound(`No such file or directory (os error 2): rename '${a}' -> '${b}'`);
    }
    const moved = [...this.#entries].filter(([k]) => k === a || k.startsWith(`${a}/`));
    for (const [k] of moved) this.#entries.delete(k);
    this.#entries.delete(b);
    for (const [k, v] of moved) this.#entries.set(b + k.slice(a.length), v);
  }
}

/** A `Deno.FileInfo` of an entry. */
function info(e: Entry) {
  const file = e.kind === "file";
  return {
    isFile: file,
    isDirectory: !file,
    isSymlink: false,
    size: file ? e.data.length : 0,
    mtime: e.mtime,
    atime: e.mtime,
    birthtime: e.mtime,
    ctime: e.mtime,
    mode: null,
  };
}

/** An open file: a cursor over the entry's bytes (grown on write). */
function openFile(fs: MemoryFiles, path: string | URL, o: Deno.OpenOptions = { read: true }) {
  const p = normalPath(path);
  let e = fs.entry(p);
  if (o.createNew && e) throw new AlreadyExists(`File exists (os error 17): open '${p}'`);
  if (!e) {
    if (!(o.create || o.createNew)) throw new NotFound(`No such file or directory (os error 2): open '${p}'`);
    fs.put(p, new Uint8Array(0));
    e = fs.entry(p)!;
  }
  if (e.kind === "dir") {
    // Opening a folder to fsync it: nothing to sync in memory.
    return { sync: async () => {}, close: () => {} };
  }
  const f = e;
  if (o.truncate) f.data = new Uint8Array(0);
  let at = o.append ? f.data.length : 0;
  return {
    write(bytes: Uint8Array): Promise<number> {
      const end = at + bytes.length;
      if (end > f.data.length) {
        // Grow by doubling into a fresh buffer; the entry's view always spans exactly the file's bytes.
        const room = f.data.buffer.byteLength >= end && f.data.byteOffset === 0 ? f.data.buffer : undefined;
        const buf = room ?? new ArrayBuffer(Math.max(end, 2 * f.data.length));
        const grown = new Uint8Array(buf, 0, end);
        if (!room) grown.set(f.data);
        f.data = grown;
      }
      f.data.set(bytes, at);
      at = end;
      f.mtime = new Date();
      return Promise.resolve(bytes.length);
    },
    read(into: Uint8Array): Promise<number | null> {
      if (at >= f.data.length) return Promise.resolve(null);
      const n = Math.min(into.length, f.data.length - at);
      into.set(f.data.subarray(at, at + n));
      at += n;
      return Promise.resolve(n);
    },
    sync: async () => {},
    close: () => {},
    [Symbol.dispose]() {},
  };
}

const enc = new TextEncoder(), dec = new TextDecoder();

function concat(a: Uint8Array, b: Uint8Array): Uint8Array {
  const out = new Uint8Array(a.length + b.length);
  out.set(a);
  out.set(b, a.length);
  return out;
}

/** Writes (or appends to) a file, as Deno.writeFile does: its folder must exist. */
function write(fs: MemoryFiles, path: string | URL, data: Uint8Array, o: Deno.WriteFileOptions = {}): void {
  const p = normalPath(path), e = fs.entry(p);
  const parent = fs.entry(parentOf(p));
  if (!parent) throw new NotFound(`No such file or directory (os error 2): writefile '${p}'`);
  if (e?.kind === "dir") throw new IsADirectory(`Is a directory (os error 21): writefile '${p}'`);
  if (o.createNew && e) throw new AlreadyExists(`File exists (os error 17): writefile '${p}'`);
  if (!e && o.create === false) throw new NotFound(`No such file or directory (os error 2): writefile '${p}'`);
  fs.put(p, o.append && e ? concat(e.data, data) : data.slice());
}

/** A function the page does not have: it throws with its name. */
function absent(name: string): () => never {
  return () => {
    throw new NotSupported(`Deno.${name} is not available in the studio page (it runs in a browser)`);
  };
}

/**
 * The page's `Deno` over `fs`, with `env` as its environment variables.
 *
 * @example
 * ```ts
 * const fs = new MemoryFiles();
 * (globalThis as { Deno?: unknown }).Deno ??= memoryDeno(fs);
 * ```
 */
export function memoryDeno(fs: MemoryFiles, env: Record<string, string> = {}) {
  const vars = new Map(Object.entries(env));
  const p = <T>(f: () => T): Promise<T> => {
    try {
      return Promise.resolve(f());
    } catch (e) {
      return Promise.reject(e);
    }
  };
  return {
    errors: ERRORS,
    build: { os: "browser", arch: "wasm", target: "browser" },
    version: { deno: "page", v8: "", typescript: "" },
    pid: 1,
    args: [] as string[],
    noColor: true,
    cwd: () => "/",
    // A page has no host of its own and serves nothing: the servers' Host rule (src/env/server/access.ts) is not run.
    hostname: () => "localhost",
    networkInterfaces: () => [] as Deno.NetworkInterfaceInfo[],
    env: {
      get: (k: string) => vars.get(k),
      set: (k: string, v: string) => void vars.set(k, v),
      has: (k: string) => vars.has(k),
      delete: (k: string) => void vars.delete(k),
      toObject: () => Object.fromEntries(vars),
    },
    stat: (path: string | URL) => p(() => info(fs.entry(path) ?? fs.file(path, "stat"))),
    statSync: (path: string | URL) => info(fs.entry(path) ?? fs.file(path, "stat")),
    lstat: (path: string | URL) => p(() => info(fs.entry(path) ?? fs.file(path, "lstat"))),
    readFile: (path: string | URL) => p(() => fs.file(path, "readfile").data.slice()),
    readFileSync: (path: string | URL) => fs.file(path, "readfile").data.slice(),
    readTextFile: (path: string | URL) => p(() => dec.decode(fs.file(path, "readfile").data)),
    readTextFileSync: (path: string | URL) => dec.decode(fs.file(path, "readfile").data),
    writeFile: (path: string | URL, data: Uint8Array, o?: Deno.WriteFileOptions) => p(() => write(fs, path, data, o)),
    writeFileSync: (path: string | URL, data: Uint8Array, o?: Deno.WriteFileOptions) => write(fs, path, data, o),
    writeTextFile: (path: string | URL, text: string, o?: Deno.WriteFileOptions) =>
      p(() => write(fs, path, enc.encode(text), o)),
    writeTextFileSync: (path: string | URL, text: string, o?: Deno.WriteFileOptions) =>
      write(fs, path, enc.encode(text), o),
    mkdir: (path: string | URL, o: Deno.MkdirOptions = {}) => p(() => fs.mkdir(path, o.recursive ?? false)),
    mkdirSync: (path: string | URL, o: Deno.MkdirOptions = {}) => fs.mkdir(path, o.recursive ?? false),
    remove: (path: string | URL, o: Deno.RemoveOptions = {}) => p(() => fs.remove(path, o.recursive ?? false)),
    removeSync: (path: string | URL, o: Deno.RemoveOptions = {}) => fs.remove(path, o.recursive ?? false),
    rename: (from: string | URL, to: string | URL) => p(() => fs.rename(from, to)),
    renameSync: (from: string | URL, to: string | URL) => fs.rename(from, to),
    copyFile: (from: string | URL, to: string | URL) => p(() => write(fs, to, fs.file(from, "copy").data)),
    truncate: (path: string | URL, len = 0) =>
      p(() => {
        const f = fs.file(path, "truncate");
        const out = new Uint8Array(len);
        out.set(f.data.subarray(0, Math.min(len, f.data.length)));
        f.data = out;
      }),
    readDir: (path: string | URL) => {
      const list = fs.list(path);
      return (async function* () {
        yield* list.map((e) => ({ ...e, isSymlink: false }));
      })();
    },
    readDirSync: (path: string | URL) => fs.list(path).map((e) => ({ ...e, isSymlink: false })),
    open: (path: string | URL, o?: Deno.OpenOptions) => p(() => openFile(fs, path, o)),
    makeTempDir: (o: { prefix?: string } = {}) =>
      p(() => {
        const dir = `/tmp/${o.prefix ?? ""}${Math.random().toString(36).slice(2, 10)}`;
        fs.mkdir(dir, true);
        return dir;
      }),
    symlink: absent("symlink"),
    kill: absent("kill"),
    exit: absent("exit"),
    addSignalListener: () => {},
    removeSignalListener: () => {},
    Command: absent("Command"),
    serve: absent("serve"),
    listen: absent("listen"),
    connect: absent("connect"),
  };
}

/** Installs the page's `Deno` over `fs` unless the runtime has its own (Deno itself); returns whether it did. */
export function installMemoryDeno(fs: MemoryFiles, env: Record<string, string> = {}): boolean {
  const g = globalThis as { Deno?: unknown };
  if (g.Deno !== undefined) return false;
  g.Deno = memoryDeno(fs, env);
  return true;
}
