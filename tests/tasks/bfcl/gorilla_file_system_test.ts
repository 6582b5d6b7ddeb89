/**
 * GorillaFileSystem against a transcript of every method, errors included, with the exact result texts gorilla's
 * Python class gives for the same calls; plus the state it exposes, the shared-children quirk of `cp`, and the
 * long-context load.
 */
import assert from "node:assert/strict";
import { newInstance } from "../../../tasks/bfcl/classes/api.ts";
import { playTranscript, runCall, type Step } from "./transcript.ts";

const SCENARIO = {
  root: {
    alex: {
      type: "directory",
      contents: {
        docs: {
          type: "directory",
          contents: {
            "notes.txt": { type: "file", content: "beta line\nalpha line\ngamma budget" },
            "old.txt": { type: "file", content: "beta line\nALPHA line" },
          },
        },
        ".hidden": { type: "file", content: "secret" },
        empty: { type: "directory", contents: {} },
      },
    },
  },
};

Deno.test("GorillaFileSystem: every method and its error texts as BFCL's Python gives them", () => {
  const fs = newInstance("GorillaFileSystem");
  fs.loadScenario(structuredClone(SCENARIO));
  const steps: Step[] = [
    ["pwd", {}, '{"current_working_directory": "/alex"}'],
    ["ls", {}, '{"current_directory_content": ["docs", "empty"]}'],
    ["ls", { "a": true }, '{"current_directory_content": ["docs", ".hidden", "empty"]}'],
    ["cd", { "folder": ".." }, '{"error": "Current directory is already the root. Cannot go back."}'],
    [
      "cd",
      { "folder": "docs/sub" },
      '{"error": "cd: docs/sub: Unsupported path. Only one folder level at a time is supported."}',
    ],
    ["cd", { "folder": "nope" }, '{"error": "cd: \'nope\': No such file or directory"}'],
    ["mkdir", { "dir_name": "docs" }, '{"error": "mkdir: cannot create directory \'docs\': File exists"}'],
    ["mkdir", { "dir_name": "a/b" }, '{"error": "mkdir: cannot create directory \'a/b\': Invalid character"}'],
    ["touch", { "file_name": "x?.txt" }, '{"error": "touch: cannot touch \'x?.txt\': Invalid character"}'],
    ["find", { "path": ".", "name": "txt" }, '{"matches": ["./docs/notes.txt", "./docs/old.txt"]}'],
    ["find", { "path": "/missing" }, '{"error": "find: \'/missing\': No such file or directory"}'],
    ["cd", { "folder": "docs" }, '{"current_working_directory": "docs"}'],
    ["pwd", {}, '{"current_working_directory": "/alex/docs"}'],
    ["cat", { "file_name": "notes.txt" }, '{"file_content": "beta line\\nalpha line\\ngamma budget"}'],
    ["cat", { "file_name": "zzz" }, '{"error": "cat: \'zzz\': No such file or directory"}'],
    ["wc", { "file_name": "notes.txt", "mode": "w" }, '{"count": 6, "type": "words"}'],
    ["wc", { "file_name": "notes.txt", "mode": "x" }, '{"error": "wc: invalid mode \'x\'"}'],
    ["sort", { "file_name": "notes.txt" }, '{"sorted_content": "alpha line\\nbeta line\\ngamma budget"}'],
    ["grep", { "file_name": "notes.txt", "pattern": "line" }, '{"matching_lines": ["beta line", "alpha line"]}'],
    ["tail", { "file_name": "notes.txt", "lines": 2 }, '{"last_lines": "alpha line\\ngamma budget"}'],
    ["tail", { "file_name": "notes.txt", "lines": 0 }, '{"last_lines": "beta line\\nalpha line\\ngamma budget"}'],
    ["diff", { "file_name1": "notes.txt", "file_name2": "old.txt" }, '{"diff_lines": "- alpha line\\n+ ALPHA line"}'],
    ["du", { "human_readable": true }, '{"disk_usage": "53.00 B"}'],
    ["du", {}, '{"disk_usage": "53 bytes"}'],
    ["touch", { "file_name": "new.md" }, "None"],
    ["touch", { "file_name": "new.md" }, '{"error": "touch: cannot touch \'new.md\': File exists"}'],
    ["echo", { "content": "hello", "file_name": "new.md" }, "None"],
    ["echo", { "content": "hi" }, '{"terminal_output": "hi"}'],
    [
      "echo",
      { "content": "x", "file_name": "none.md" },
      '{"error": "echo: cannot write to \'none.md\': No such file"}',
    ],
    ["mkdir", { "dir_name": "box" }, "None"],
    ["cp", { "source": "new.md", "destination": "box" }, "{\"result\": \"'new.md' copied to 'box/new.md'\"}"],
    [
      "cp",
      { "source": "new.md", "destination": "box" },
      "Error during execution: File 'new.md' already exists in directory 'box'.",
    ],
    ["mv", { "source": "old.txt", "destination": "box" }, "{\"result\": \"'old.txt' moved to 'box/old.txt'\"}"],
    [
      "mv",
      { "source": "notes.txt", "destination": "renamed.txt" },
      "{\"result\": \"'notes.txt' moved to 'renamed.txt'\"}",
    ],
    [
      "mv",
      { "source": "renamed.txt", "destination": "new.md" },
      "{\"error\": \"mv: cannot move 'renamed.txt' to 'new.md': Not a directory\"}",
    ],
    [
      "mv",
      { "source": "ghost", "destination": "box" },
      '{"error": "mv: cannot move \'ghost\': No such file or directory"}',
    ],
    [
      "mv",
      { "source": "new.md", "destination": "a/b" },
      '{"error": "mv: path not allowed in destination. Provide only a file or directory name."}',
    ],
    ["rmdir", { "dir_name": "box" }, '{"error": "rmdir: cannot remove \'box\': Directory not empty"}'],
    ["rm", { "file_name": "new.md" }, '{"result": "\'new.md\' removed"}'],
    ["rm", { "file_name": "new.md" }, '{"error": "rm: cannot remove \'new.md\': No such file or directory"}'],
    ["rmdir", { "dir_name": "renamed.txt" }, '{"error": "rmdir: cannot remove \'renamed.txt\': Not a directory"}'],
    ["cd", { "folder": "box" }, '{"current_working_directory": "box"}'],
    ["ls", {}, '{"current_directory_content": ["new.md", "old.txt"]}'],
    ["cd", { "folder": "/" }, '{"current_working_directory": "alex"}'],
    ["cd", { "folder": ".." }, '{"error": "Current directory is already the root. Cannot go back."}'],
    [
      "cd",
      { "folder": "docs", "extra": 1 },
      "Error during execution: GorillaFileSystem.cd() got an unexpected keyword argument 'extra'",
    ],
    ["wc", {}, "Error during execution: GorillaFileSystem.wc() missing 1 required positional argument: 'file_name'"],
  ];
  playTranscript(fs, steps);
});

Deno.test("GorillaFileSystem: state is the tree (names and contents) and long_context; cp shares children", () => {
  const fs = newInstance("GorillaFileSystem");
  fs.loadScenario(structuredClone(SCENARIO));
  const before = JSON.stringify(fs.state());
  runCall(fs, "ls", { a: true });
  assert.equal(JSON.stringify(fs.state()), before, "ls changes nothing");
  runCall(fs, "cp", { source: "docs", destination: "docs2" });
  runCall(fs, "cd", { folder: "docs2" });
  runCall(fs, "echo", { content: "changed", file_name: "old.txt" });
  runCall(fs, "cd", { folder: ".." });
  runCall(fs, "cd", { folder: "docs" });
  // Python's cp copies the contents dict shallowly: the file object is shared, so the source changed too.
  assert.equal(runCall(fs, "cat", { file_name: "old.txt" }), '{"file_content": "changed"}');
  const state = fs.state() as { root: { name: string; contents: Record<string, unknown> }; long_context: boolean };
  assert.equal(state.root.name, "alex");
  assert.deepEqual(Object.keys(state.root.contents), ["docs", ".hidden", "empty", "docs2"]);
  assert.equal(state.long_context, false);
});

Deno.test("GorillaFileSystem: long context pads files and fills the innermost directories", () => {
  const fs = newInstance("GorillaFileSystem");
  fs.loadScenario(structuredClone(SCENARIO), true);
  const ls = JSON.parse(runCall(fs, "ls", {})).current_directory_content as string[];
  assert.deepEqual(ls, ["docs", "empty"], "the root holds a directory, so it is not filled");
  runCall(fs, "cd", { folder: "empty" });
  const filled = JSON.parse(runCall(fs, "ls", { a: true })).current_directory_content as string[];
  assert.equal(filled.length, 30);
  runCall(fs, "cd", { folder: ".." });
  runCall(fs, "cd", { folder: "docs" });
  const cat = JSON.parse(runCall(fs, "cat", { file_name: "notes.txt" })).file_content as string;
  assert.ok(cat.startsWith("beta line\nalpha line\ngamma budget") && cat.length > 3000, "padded with the extension");
});
