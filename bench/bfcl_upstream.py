"""Upstream's side of `deno task bench bfcl-replay --upstream DIR`: BFCL's own Python classes, run as BFCL runs them.

Reads BFCL's multi-turn files from --data-dir, and for every entry executes each turn's ground-truth call strings
with gorilla's `execute_multi_turn_func_call` (imported from --upstream, the folder that holds `bfcl_eval/`; nothing
of gorilla's is copied here), which evaluates them with Python's own argument binding, numbers and errors. Prints one
JSON line per entry: its id, the result text of every call by turn, and after every turn each involved instance's
public attributes (the ones BFCL's state checker compares) in the plain form Crucible's `toPlain` gives them:
floats as JSON numbers, sets as lists sorted by their text, tuples as lists, dict keys as text (10.0 as 10, the key
Python's == equates with it), the file system's nodes by the fields their __eq__ compares, and other objects with no
JSON form as {"__python__": repr}. Needs Debian's python3 and python3-mpmath; no other package.

Written for Crucible: a second engine to compare the TypeScript classes with, byte for byte.
"""

import argparse
import json
import os
import sys

CATEGORIES = ["base", "miss_func", "miss_param", "long_context"]


def key_text(k):
    """A dict key's text, equal for keys Python's == (and hash) equate: 10, 10.0 and True -> '10', '10', '1'."""
    if isinstance(k, bool) or (isinstance(k, float) and k.is_integer()):
        k = int(k)
    return str(k)


def plain(v):
    """The value in toPlain's form (tasks/bfcl/classes/py.ts)."""
    if v is None or isinstance(v, (bool, int, str)):
        return v
    if isinstance(v, float):
        if v != v or v in (float("inf"), float("-inf")):
            return {"__python__": repr(v)}
        return v
    if v is Ellipsis:
        return {"__python__": "Ellipsis"}
    if isinstance(v, (list, tuple)):
        return [plain(x) for x in v]
    if isinstance(v, (set, frozenset)):
        return sorted((plain(x) for x in v), key=lambda x: str(x))
    if isinstance(v, dict):
        return {key_text(k): plain(x) for k, x in v.items()}
    kind = type(v).__name__
    # The file system's nodes, by the fields their __eq__ compares (a Directory's parent is not one of them).
    if kind == "File":
        return {"type": "file", "name": v.name, "content": v.content}
    if kind == "Directory":
        return {"type": "directory", "name": v.name, "contents": plain(v.contents)}
    return {"__python__": repr(v)}


def data_file(data_dir, category, sub=None):
    for version in ("v4", "v3"):
        name = f"BFCL_{version}_multi_turn_{category}.json"
        path = os.path.join(data_dir, sub, name) if sub else os.path.join(data_dir, name)
        if os.path.exists(path):
            return path
    return None


def read_lines(path):
    with open(path, encoding="utf-8") as f:
        return [json.loads(line) for line in f if line.strip()]


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--upstream", required=True, help="the folder holding gorilla's bfcl_eval/")
    ap.add_argument("--data-dir", required=True, help="BFCL's data directory (bfcl_eval/data)")
    ap.add_argument("--ids", default="", help="comma-separated entry ids to run (default: all)")
    ap.add_argument(
        "--answers",
        help="JSON lines of {id, ground_truth} to execute instead of possible_answer/ (variants of the calls)",
    )
    args = ap.parse_args()
    sys.path.insert(0, os.path.abspath(args.upstream))
    from bfcl_eval.eval_checker.multi_turn_eval.multi_turn_utils import execute_multi_turn_func_call

    wanted = set(filter(None, args.ids.split(",")))
    given = {a["id"]: a["ground_truth"] for a in read_lines(args.answers)} if args.answers else None
    run = 0
    for category in CATEGORIES:
        questions = data_file(args.data_dir, category)
        answers = data_file(args.data_dir, category, "possible_answer")
        if not questions or not answers:
            continue
        truth = given or {a["id"]: a["ground_truth"] for a in read_lines(answers)}
        for entry in read_lines(questions):
            if (wanted and entry["id"] not in wanted) or entry["id"] not in truth:
                continue
            run += 1
            # A fresh name per entry and run: BFCL keeps instances in globals() under model and entry names.
            model = f"crucible_replay_{run}"
            results, states = [], []
            for turn in truth[entry["id"]]:
                out, instances = execute_multi_turn_func_call(
                    func_call_list=turn,
                    initial_config=entry["initial_config"],
                    involved_classes=entry["involved_classes"],
                    model_name=model,
                    test_entry_id=entry["id"],
                    long_context="long_context" in category,
                )
                results.append(out)
                states.append({
                    name: {k: plain(v) for k, v in vars(inst).items() if not k.startswith("_")}
                    for name, inst in instances.items()
                })
            line = {"id": entry["id"], "results": results, "states": states}
            sys.stdout.write(json.dumps(line) + "\n")
            sys.stdout.flush()


if __name__ == "__main__":
    main()
