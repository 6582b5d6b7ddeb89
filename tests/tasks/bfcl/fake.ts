// A small stand-in API class for the BFCL tests: a notes store with a public `notes` dict and a private counter, a
// Python-style TypeError for a missing argument, and a raised error for a missing note. It satisfies ApiInstance, so
// the executor and checker are tested without depending on the eight real classes.
import type { ApiInstance } from "../../../tasks/bfcl/execute.ts";

class ApiCallError extends Error {
  override name = "ApiCallError";
}

/** NotesAPI: add_note(title, text), delete_note(title), list_notes(); MathLite: add(a, b) (stateless). */
export function fakeInstance(className: string): ApiInstance {
  if (className === "MathLite") {
    return {
      name: "MathLite",
      loadScenario() {},
      call(method, args) {
        if (method !== "add") throw new ApiCallError(`'MathLite' object has no attribute '${method}'`);
        return { result: Number(args.a) + Number(args.b) };
      },
      methods: () => ["add"],
      state: () => ({}),
    };
  }
  if (className !== "NotesAPI") throw new RangeError(`No fake class ${className}`);
  let notes: Record<string, string> = {};
  let calls = 0;
  return {
    name: "NotesAPI",
    loadScenario(config) {
      notes = { ...(config.notes as Record<string, string> ?? {}) };
    },
    call(method, args, positional = []) {
      calls++;
      const a = { ...args };
      if (positional.length) a.title ??= positional[0];
      if (method === "add_note") {
        if (a.title === undefined) {
          throw new ApiCallError("NotesAPI.add_note() missing 1 required positional argument: 'title'");
        }
        notes[a.title as string] = String(a.text ?? "");
        return { added: a.title };
      }
      if (method === "delete_note") {
        if (!(String(a.title) in notes)) throw new ApiCallError(`No note named ${a.title}`);
        delete notes[a.title as string];
        return `Deleted ${a.title}`;
      }
      if (method === "list_notes") return Object.keys(notes);
      throw new ApiCallError(`'NotesAPI' object has no attribute '${method}'`);
    },
    methods: () => ["add_note", "delete_note", "list_notes"],
    state: () => ({ notes: { ...notes }, _calls: calls }),
  };
}
