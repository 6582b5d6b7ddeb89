/**
 * BFCL's GorillaFileSystem: an in-memory tree of directories and files with shell-like methods (pwd, ls, cd,
 * mkdir, touch, echo, cat, find, wc, sort, grep, du, tail, diff, mv, rm, rmdir, cp) and their exact result and
 * error texts. The object model mirrors the Python one on purpose, sharing included: `cp` of a directory copies
 * its contents map shallowly (children shared with the source) and `mv` of a directory hands the same map to the
 * new directory (children keep their old parent), so later edits and `cd ..` behave as in BFCL.
 * State compared by the checker: `root` (names and contents, parents ignored) and `long_context`.
 */
import { ApiCallError, expectStr, type MethodSpec, PyApiBase } from "./base.ts";
import { longContext } from "./long_context.ts";
import {
  compareStr,
  formatFixed,
  hashKey,
  pyCompare,
  pyContains,
  pyEq,
  pyLen,
  pyStr,
  splitlines,
  splitWhitespace,
  truthy,
} from "./py.ts";

/** A file: name and text content. */
export class FsFile {
  constructor(public name: string, public content = "") {}
}

/** A directory: name, parent (null at the root) and contents in insertion order. */
export class FsDir {
  contents = new Map<string, FsFile | FsDir>();
  constructor(public name: string, public parent: FsDir | null = null) {}

  addFile(name: string, content = ""): void {
    if (this.contents.has(name)) throw new ApiCallError(`File '${name}' already exists in directory '${this.name}'.`);
    this.contents.set(name, new FsFile(name, content));
  }

  addDirectory(name: string): void {
    if (this.contents.has(name)) {
      throw new ApiCallError(`Directory '${name}' already exists in directory '${this.name}'.`);
    }
    this.contents.set(name, new FsDir(name, this));
  }

  getItem(name: string): FsFile | FsDir | undefined {
    return name === "." ? this : this.contents.get(name);
  }
}

/** A directory's plain form for state comparison (Python's Directory.__eq__: name and contents). */
function plainItem(item: FsFile | FsDir): Record<string, unknown> {
  if (item instanceof FsFile) return { type: "file", name: item.name, content: item.content };
  const contents: Record<string, unknown> = {};
  for (const [k, v] of item.contents) contents[k] = plainItem(v);
  return { type: "directory", name: item.name, contents };
}

const INVALID = '|/\\?%*:"><';

/** Python's `not any(c in name for c in '|/\\?%*:"><')` (TypeError when name is not iterable). */
function validName(name: unknown): boolean {
  return ![...INVALID].some((c) => pyContains(name, c));
}

type ScenarioNode = { type: string; content?: string; contents?: Record<string, ScenarioNode> };

/** The file system class; one instance per episode. */
export class GorillaFileSystem extends PyApiBase {
  readonly name = "GorillaFileSystem";
  root = new FsDir("/", null);
  longContext = false;
  #cwd: FsDir = this.root;

  loadScenario(config: Record<string, unknown>, longContext = false): void {
    this.longContext = longContext;
    this.root = new FsDir("/", null);
    const root = config.root as Record<string, ScenarioNode> | undefined;
    if (root !== undefined) {
      const first = Object.keys(root)[0];
      this.root = this.#loadDirectory(root[first].contents ?? {}, new FsDir(first, null));
    }
    this.#cwd = this.root;
  }

  #loadDirectory(current: Record<string, ScenarioNode>, parent: FsDir): FsDir {
    let bottommost = true;
    for (const [name, data] of Object.entries(current)) {
      if (data.type === "directory") {
        bottommost = false;
        parent.contents.set(name, this.#loadDirectory(data.contents ?? {}, new FsDir(name, parent)));
      } else if (data.type === "file") {
        let content = data.content as string;
        if (this.longContext && !(longContext("FILES_TAIL_USED") as string[]).includes(name)) {
          content += longContext("FILE_CONTENT_EXTENSION") as string;
        }
        parent.contents.set(name, new FsFile(name, content));
      }
    }
    if (bottommost && this.longContext) {
      for (const name of longContext("POPULATE_FILE_EXTENSION") as string[]) parent.addFile(name);
    }
    return parent;
  }

  state(): Record<string, unknown> {
    return { root: plainItem(this.root), long_context: this.longContext };
  }

  /** The working directory, which BFCL's state check leaves out but every relative path reads. */
  position(): Record<string, unknown> {
    return { current_working_directory: this.#path() };
  }

  /** The working directory's path, as `pwd` answers it. */
  #path(): string {
    const path: string[] = [];
    for (let d: FsDir | null = this.#cwd; d !== null; d = d.parent) path.push(d.name);
    return "/" + path.reverse().join("/");
  }

  /** The current directory (for tests and the generator). */
  get currentDir(): FsDir {
    return this.#cwd;
  }

  #navigate(path: unknown): FsDir | { error: string } {
    if (path === null || path === ".") return this.#cwd;
    if (path === "/") return this.root;
    const text = expectStr(path, "strip");
    const dirs = text.replace(/^\/+|\/+$/g, "").split("/");
    let dir = text.startsWith("/") ? this.root : this.#cwd;
    for (const name of dirs) {
      const next = dir.getItem(name);
      if (!(next instanceof FsDir)) return { error: `cd: '${text}': No such file or directory` };
      dir = next;
    }
    return dir;
  }

  /** Python's `name in self._current_dir.contents` (TypeError for an unhashable name). */
  #has(name: unknown): boolean {
    const key = hashKey(name);
    return typeof key === "string" && this.#cwd.contents.has(key);
  }

  /** The file `name` in the current directory, if it is a file. */
  #file(name: unknown): FsFile | undefined {
    const item = this.#has(name) ? this.#cwd.contents.get(name as string) : undefined;
    return item instanceof FsFile ? item : undefined;
  }

  protected readonly table: Record<string, MethodSpec> = {
    pwd: {
      params: [],
      run: () => ({ current_working_directory: this.#path() }),
    },
    ls: {
      params: [["a", false]],
      run: ({ a }) => {
        let contents = [...this.#cwd.contents.keys()];
        if (!truthy(a)) contents = contents.filter((n) => !n.startsWith("."));
        return { current_directory_content: contents };
      },
    },
    cd: {
      params: ["folder"],
      run: (args) => {
        let folder = expectStr(args.folder, "rstrip").replace(/\/+$/, "");
        if (folder === "") folder = "/";
        if (![".", "..", "/"].includes(folder) && folder.includes("/")) {
          return { error: `cd: ${folder}: Unsupported path. Only one folder level at a time is supported.` };
        }
        if (folder === "..") {
          if (this.#cwd.parent) this.#cwd = this.#cwd.parent;
          else if (this.root === this.#cwd || sameDir(this.root, this.#cwd)) {
            return { error: "Current directory is already the root. Cannot go back." };
          } else return { error: "cd: ..: No such directory" };
          return {};
        }
        const target = this.#navigate(folder);
        if (!(target instanceof FsDir)) return target;
        this.#cwd = target;
        return { current_working_directory: target.name };
      },
    },
    mkdir: {
      params: ["dir_name"],
      run: ({ dir_name }) => {
        const shown = pyStr(dir_name);
        if (!validName(dir_name)) return { error: `mkdir: cannot create directory '${shown}': Invalid character` };
        if (this.#has(dir_name)) return { error: `mkdir: cannot create directory '${shown}': File exists` };
        this.#cwd.addDirectory(dir_name as string);
        return null;
      },
    },
    touch: {
      params: ["file_name"],
      run: ({ file_name }) => {
        const shown = pyStr(file_name);
        if (!validName(file_name)) return { error: `touch: cannot touch '${shown}': Invalid character` };
        if (this.#has(file_name)) return { error: `touch: cannot touch '${shown}': File exists` };
        this.#cwd.addFile(file_name as string);
        return null;
      },
    },
    echo: {
      params: ["content", ["file_name", null]],
      run: ({ content, file_name }) => {
        if (file_name === null) return { terminal_output: content };
        const shown = pyStr(file_name);
        if (!validName(file_name)) return { error: `echo: cannot write to '${shown}': Invalid character` };
        if (!truthy(file_name)) return { terminal_output: content };
        if (!this.#has(file_name)) return { error: `echo: cannot write to '${shown}': No such file` };
        const item = this.#cwd.contents.get(file_name as string)!;
        if (item instanceof FsDir) throw new ApiCallError("'Directory' object has no attribute '_write'");
        item.content = content as string;
        return null;
      },
    },
    cat: {
      params: ["file_name"],
      run: ({ file_name }) => {
        const shown = pyStr(file_name);
        if (!validName(file_name)) return { error: `cat: '${shown}': Invalid character` };
        if (!this.#has(file_name)) return { error: `cat: '${shown}': No such file or directory` };
        const item = this.#cwd.contents.get(file_name as string)!;
        if (item instanceof FsFile) return { file_content: item.content };
        return { error: `cat: '${shown}': Is a directory` };
      },
    },
    find: {
      params: [["path", "."], ["name", null]],
      run: ({ path, name }) => {
        const target = this.#navigate(path);
        if (!(target instanceof FsDir)) {
          const msg = target.error;
          return msg.startsWith("cd:") ? { error: msg.replace("cd:", "find:") } : target;
        }
        const matches: string[] = [];
        const search = (dir: FsDir, base: string): void => {
          for (const [itemName, item] of dir.contents) {
            const itemPath = `${base}/${itemName}`;
            if (name === null || pyContains(itemName, name)) matches.push(itemPath);
            if (item instanceof FsDir) search(item, itemPath);
          }
        };
        search(target, expectStr(path, "rstrip").replace(/\/+$/, ""));
        return { matches };
      },
    },
    wc: {
      params: ["file_name", ["mode", "l"]],
      run: ({ file_name, mode }) => {
        if (!["l", "w", "c"].some((m) => pyEq(m, mode))) return { error: `wc: invalid mode '${pyStr(mode)}'` };
        const file = this.#file(file_name);
        if (file) {
          if (mode === "l") return { count: splitlines(file.content).length, type: "lines" };
          if (mode === "w") return { count: splitWhitespace(file.content).length, type: "words" };
          return { count: pyLen(file.content), type: "characters" };
        }
        return { error: `wc: ${pyStr(file_name)}: No such file or directory` };
      },
    },
    sort: {
      params: ["file_name"],
      run: ({ file_name }) => {
        const file = this.#file(file_name);
        if (file) return { sorted_content: splitlines(file.content).sort(compareStr).join("\n") };
        return { error: `sort: ${pyStr(file_name)}: No such file or directory` };
      },
    },
    grep: {
      params: ["file_name", "pattern"],
      run: ({ file_name, pattern }) => {
        const file = this.#file(file_name);
        if (file) return { matching_lines: splitlines(file.content).filter((l) => pyContains(l, pattern)) };
        return { error: `grep: ${pyStr(file_name)}: No such file or directory` };
      },
    },
    du: {
      params: [["human_readable", false]],
      run: ({ human_readable }) => {
        const size = (item: FsFile | FsDir): number =>
          item instanceof FsFile
            ? new TextEncoder().encode(item.content).length
            : [...item.contents.values()].reduce((s, c) => s + size(c), 0);
        let total = size(this.#cwd);
        if (!truthy(human_readable)) return { disk_usage: `${total} bytes` };
        for (const unit of ["B", "KB", "MB", "GB", "TB"]) {
          if (total < 1024) return { disk_usage: `${formatFixed(total, 2)} ${unit}` };
          total /= 1024;
        }
        return { disk_usage: `${formatFixed(total, 2)} PB` };
      },
    },
    tail: {
      params: ["file_name", ["lines", 10]],
      run: ({ file_name, lines }) => {
        const file = this.#file(file_name);
        if (file) {
          const content = splitlines(file.content);
          let n = lines;
          if (pyCompare(n, ">", content.length)) n = content.length;
          if (typeof n === "boolean") n = Number(n);
          if (typeof n !== "number" || !Number.isInteger(n)) {
            throw new ApiCallError("slice indices must be integers or None or have an __index__ method", "TypeError");
          }
          return { last_lines: pySliceFrom(content, -n).join("\n") };
        }
        return { error: `tail: ${pyStr(file_name)}: No such file or directory` };
      },
    },
    diff: {
      params: ["file_name1", "file_name2"],
      run: ({ file_name1, file_name2 }) => {
        const both = this.#has(file_name1) && this.#has(file_name2);
        const f1 = both ? this.#file(file_name1) : undefined;
        const f2 = both ? this.#file(file_name2) : undefined;
        if (f1 && f2) {
          const a = splitlines(f1.content);
          const b = splitlines(f2.content);
          const out: string[] = [];
          for (let i = 0; i < Math.min(a.length, b.length); i++) if (a[i] !== b[i]) out.push(`- ${a[i]}\n+ ${b[i]}`);
          return { diff_lines: out.join("\n") };
        }
        return { error: `diff: ${pyStr(file_name1)} or ${pyStr(file_name2)}: No such file or directory` };
      },
    },
    mv: {
      params: ["source", "destination"],
      run: (args) => this.#moveOrCopy("mv", args.source, args.destination),
    },
    rm: {
      params: ["file_name"],
      run: ({ file_name }) => {
        const shown = pyStr(file_name);
        if (!this.#has(file_name)) return { error: `rm: cannot remove '${shown}': No such file or directory` };
        this.#cwd.contents.delete(file_name as string);
        return { result: `'${shown}' removed` };
      },
    },
    rmdir: {
      params: ["dir_name"],
      run: ({ dir_name }) => {
        const shown = pyStr(dir_name);
        if (!this.#has(dir_name)) return { error: `rmdir: cannot remove '${shown}': No such file or directory` };
        const item = this.#cwd.contents.get(dir_name as string)!;
        if (!(item instanceof FsDir)) return { error: `rmdir: cannot remove '${shown}': Not a directory` };
        if (item.contents.size > 0) return { error: `rmdir: cannot remove '${shown}': Directory not empty` };
        this.#cwd.contents.delete(dir_name as string);
        return { result: `'${shown}' removed` };
      },
    },
    cp: {
      params: ["source", "destination"],
      run: (args) => this.#moveOrCopy("cp", args.source, args.destination),
    },
  };

  /** mv and cp share their checks; they differ in removing the source and in how a directory's map is taken. */
  #moveOrCopy(op: "mv" | "cp", source: unknown, destination: unknown): Record<string, string> {
    const verb = op === "mv" ? "move" : "copy";
    const done = op === "mv" ? "moved" : "copied";
    const src = pyStr(source);
    const dst = pyStr(destination);
    if (!this.#has(source)) return { error: `${op}: cannot ${verb} '${src}': No such file or directory` };
    const item = this.#cwd.contents.get(source as string)!;
    if (pyContains(destination, "/")) {
      return { error: `${op}: path not allowed in destination. Provide only a file or directory name.` };
    }
    const place = (dir: FsDir, name: string): void => {
      if (item instanceof FsFile) dir.addFile(name, item.content);
      else {
        dir.addDirectory(name);
        (dir.contents.get(name) as FsDir).contents = op === "mv" ? item.contents : new Map(item.contents);
      }
    };
    if (this.#has(destination)) {
      const dest = this.#cwd.contents.get(destination as string)!;
      if (!(dest instanceof FsDir)) {
        return { error: `${op}: cannot ${verb} '${src}' to '${dst}': Not a directory` };
      }
      // mv checks the bare name in the destination; cp checks "dest/source", which no key ever equals.
      if (op === "mv" && dest.contents.has(source as string)) {
        return { error: `mv: cannot move '${src}' to '${dst}/${src}': File exists` };
      }
      if (op === "mv") this.#cwd.contents.delete(source as string);
      place(dest, source as string);
      return { result: `'${src}' ${done} to '${dst}/${src}'` };
    }
    if (op === "mv") this.#cwd.contents.delete(source as string);
    place(this.#cwd, destination as string);
    return { result: `'${src}' ${done} to '${dst}'` };
  }
}

/** Python's Directory.__eq__: same name and equal contents (parents ignored). */
function sameDir(a: FsDir, b: FsDir): boolean {
  return JSON.stringify(plainItem(a)) === JSON.stringify(plainItem(b));
}

/** Python's `xs[start:]` for a possibly negative start (`xs[-0:]` is the whole list). */
function pySliceFrom<T>(xs: T[], start: number): T[] {
  const s = start < 0 ? Math.max(0, xs.length + start) : Math.min(start, xs.length);
  return xs.slice(s);
}
