#!/usr/bin/env python3
"""Run the native-argument case table through other readers, for the README's comparison.

The table is crates/parser/tests/fixtures/native_arguments.jsonl: each line has an
`input` (the arguments text a model sent) and the `expected` object, or `null` when the text
has no one meaning and must be refused. Our reader (crates/parser/src/args.rs) is held
to every line by the `parser` test target (`arguments::every_case_...`); this script measures
two anchors on the same lines:
- Python's `json.loads` (strict JSON);
- `agent_tool_parser.safe_json_loads` from the `agent-tool-parser` package on PyPI (its
  argument repair), when it is installed, e.g.
      python3 -m venv /tmp/atp && /tmp/atp/bin/pip install agent-tool-parser
      /tmp/atp/bin/python scripts/compare_argument_readers.py [--cases]

A reader's answer counts as read when it is a JSON object, refused otherwise (an error, no
value, or a value that is not an object). Per reader it prints: read correctly, refused
correctly, refused though readable, and wrong (an object other than the expected one, or one
where the text must be refused). --cases also lists each case's outcome per reader.
"""

import json
import sys
from pathlib import Path

TABLE = (
    Path(__file__).resolve().parent.parent
    / "crates/parser/tests/fixtures/native_arguments.jsonl"
)


def readers():
    out = [("json.loads", json.loads)]
    try:
        import agent_tool_parser
        from importlib.metadata import version

        name = f"agent-tool-parser {version('agent-tool-parser')}"
        if getattr(agent_tool_parser, "ACCELERATED", False):
            name += " (accelerated)"
        out.append((name, lambda s: agent_tool_parser.safe_json_loads(s, default=None)))
    except ImportError:
        print("agent-tool-parser is not installed: measuring json.loads only", file=sys.stderr)
    return out


def canonical(value):
    # json.dumps tells True from 1, which == does not.
    return json.dumps(value, sort_keys=True)


def outcome(read, case):
    try:
        got = read(case["input"])
    except Exception:  # noqa: BLE001 - any failure is a refusal
        got = None
    expected = case["expected"]
    if not isinstance(got, dict):
        return "refused correctly" if expected is None else "refused though readable"
    if expected is not None and canonical(got) == canonical(expected):
        return "read correctly"
    return "wrong"


def main():
    cases = [json.loads(line) for line in TABLE.read_text().splitlines() if line.strip()]
    readable = sum(1 for c in cases if c["expected"] is not None)
    print(f"{len(cases)} cases: {readable} with one meaning, {len(cases) - readable} to refuse")
    kinds = ["read correctly", "refused correctly", "refused though readable", "wrong"]
    for name, read in readers():
        results = [(c["id"], outcome(read, c)) for c in cases]
        counts = {k: sum(1 for _, o in results if o == k) for k in kinds}
        print(f"{name}: " + ", ".join(f"{k} {counts[k]}" for k in kinds))
        if "--cases" in sys.argv:
            for case_id, o in results:
                if o not in ("read correctly", "refused correctly"):
                    print(f"  {case_id}: {o}")


if __name__ == "__main__":
    main()
