#!/usr/bin/env bash
# Run the parser's criterion benchmark and print a throughput table (MB/s, 1 MB = 10^6 bytes).
#
#   scripts/parser_bench.sh            # all benchmarks
#   scripts/parser_bench.sh cdata_1MB  # only those whose id contains the filter
#
# Uses CARGO_TARGET_DIR if set (default: target/).
set -euo pipefail
cd "$(dirname "$0")/.."
target="${CARGO_TARGET_DIR:-target}"
log="$(mktemp)"
cargo bench -p artifactflow-parser --bench parser -- ${1:+"$1"} >"$log" 2>&1 || { cat "$log"; exit 1; }
rm -f "$log"
python3 - "$target/criterion/parser" <<'PY'
import json, os, sys
root = sys.argv[1]
rows = []
for dirpath, _, files in os.walk(root):
    if "estimates.json" in files and os.path.basename(dirpath) == "new":
        bench = json.load(open(os.path.join(dirpath, "benchmark.json")))
        est = json.load(open(os.path.join(dirpath, "estimates.json")))
        n = bench.get("throughput", {}).get("Bytes")
        if not n:
            continue
        ns = est["median"]["point_estimate"]
        rows.append((bench["function_id"], bench.get("value_str") or "", n / 1e6, ns / 1e6, n / ns * 1e3))
well = {r[0]: r[4] for r in rows if r[1] == "well_formed"}
print("%-28s %-26s %8s %10s %9s %9s" % ("input", "variant", "MB", "median ms", "MB/s", "vs well"))
for f, v, mb, ms, mbs in sorted(rows):
    ratio = ("%.2fx" % (well[f] / mbs)) if f in well and v != "well_formed" else ""
    print("%-28s %-26s %8.2f %10.2f %9.1f %9s" % (f, v, mb, ms, mbs, ratio))
PY
