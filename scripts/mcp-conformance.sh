#!/usr/bin/env bash
# Runs the official MCP conformance suite (@modelcontextprotocol/conformance, pinned exactly in
# tests/mcp/conformance/package.json) against our client: every client scenario of spec 2025-11-25
# and of spec 2026-07-28 (each run at its version: the suite's server speaks that version),
# auth included, and the client scenarios of the skills extension (SEP-2640), with
# crates/test-support's mcp-conformance-client (built on the engine's MCP module).
# Prints the pass/fail counts. A failing scenario fails the run unless it is listed in
# tests/mcp/conformance-expected-failures.yml as SCENARIO@VERSION (printed on every run), and
# a listed scenario that passes fails it too, so the list stays true.
# Scenarios run one after the other (about 1 s each): run at once (the suite's --suite mode),
# sse-retry misses its timing window (the server's `retry` of 500 ms, -50/+200 ms) on a loaded
# machine, and gnome-keyring drops requests under many concurrent clients.
# Tokens go to a keyring: run it inside scripts/with-session.sh (test.sh does).
# Usage: scripts/mcp-conformance.sh [SCENARIO@VERSION...]   (VERSION: 2025-11-25, 2026-07-28,
#        or "skills" for the extension's scenarios)
set -euo pipefail
ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
cd "$ROOT"
export PATH="$ROOT/tests/mcp/node_modules/.bin:$HOME/.cargo/bin:$PATH"   # Node 22 for the suite
SPECS=(2025-11-25 2026-07-28)
EXPECTED=tests/mcp/conformance-expected-failures.yml
suite="$ROOT/tests/mcp/conformance/node_modules/.bin/conformance"
[ -x "$suite" ] || { echo "the conformance suite is not installed: run scripts/setup.sh --test" >&2; exit 1; }

# Built with the workspace's features, as scripts/test.sh builds everything (no second build).
cargo build -q --workspace --features artifactflow-desktop/custom-protocol --bin mcp-conformance-client
client="$ROOT/target/debug/mcp-conformance-client"
export ARTIFACTFLOW_KEYRING_SERVICE=artifactflow-mcp-conformance

# Every run: SCENARIO@VERSION.
if [ $# -gt 0 ]; then
  for r in "$@"; do
    [[ $r =~ ^[^@]+@(2025-11-25|2026-07-28|skills)$ ]] \
      || { echo "$r: give SCENARIO@VERSION, VERSION one of ${SPECS[*]} skills" >&2; exit 2; }
  done
  runs=("$@")
else
  runs=()
  for spec in "${SPECS[@]}"; do
    mapfile -t at_spec < <("$suite" list --client --spec-version "$spec" | sed -n 's/^  - \([^ ]*\) .*/\1/p')
    [ ${#at_spec[@]} -gt 0 ] || { echo "the suite listed no client scenarios for $spec" >&2; exit 1; }
    for s in "${at_spec[@]}"; do runs+=("$s@$spec"); done
  done
  # The skills extension's client scenarios, every one the suite lists.
  mapfile -t skills < <("$suite" list --client | sed -n 's/^  - \(sep-2640-client-[^ ]*\) .*/\1/p')
  [ ${#skills[@]} -ge 4 ] || { echo "the suite lists ${#skills[@]} sep-2640 client scenarios (expected 4 or more)" >&2; exit 1; }
  for s in "${skills[@]}"; do runs+=("$s@skills"); done
fi
mapfile -t expected < <(sed -n 's/^ *- *\([^ #]*\).*/\1/p' "$EXPECTED")
echo "Expected failures (${EXPECTED}): ${expected[*]:-none}"

out=$(mktemp -d)
trap 'rm -rf "$out"' EXIT
# One run: its log and its results folder, and an "ok" marker when it passed (a scenario the
# suite skips at that version did not pass).
run() {
  local scenario=${1%@*} version=${1##*@} log="$out/${1//\//_}"
  local at=(--spec-version "$version")
  [ "$version" = skills ] && at=()
  if (cd "$out" && "$suite" client --command "$client" --scenario "$scenario" "${at[@]}" -o "$log.results") >"$log.log" 2>&1 \
    && ! grep -q "^SKIPPED" "$log.log"; then
    touch "$log.ok"
  fi
}
for r in "${runs[@]}"; do run "$r"; done

passed=0 failed=0 unexpected=() stale=()
declare -A per_version=()
for r in "${runs[@]}"; do
  log="$out/${r//\//_}"
  is_expected=0
  for e in "${expected[@]}"; do [ "$e" = "$r" ] && is_expected=1; done
  if [ -e "$log.ok" ]; then
    passed=$((passed + 1))
    per_version[${r##*@}]=$(( ${per_version[${r##*@}]:-0} + 1 ))
    printf '  ✓ %s\n' "$r"
    [ $is_expected -eq 1 ] && stale+=("$r")
  else
    failed=$((failed + 1))
    if [ $is_expected -eq 1 ]; then
      printf '  ~ %s (expected failure)\n' "$r"
    else
      printf '  ✗ %s\n' "$r"
      unexpected+=("$r")
      sed -n '/Failed Checks:/,$p' "$log.log" | head -20 | sed 's/^/      /'
      tail -5 "$log".results/*/stderr.txt 2>/dev/null | sed 's/^/      client: /' || true
    fi
  fi
done
summary=""
for v in "${SPECS[@]}" skills; do summary+=" $v: ${per_version[$v]:-0} passed;"; done
echo "MCP conformance (client scenarios):$summary in all $passed passed, $failed failed (${#expected[@]} expected to fail)"
status=0
if [ ${#unexpected[@]} -gt 0 ]; then
  echo "Unexpected failures: ${unexpected[*]}" >&2
  status=1
fi
if [ ${#stale[@]} -gt 0 ]; then
  echo "Now passing, remove from $EXPECTED: ${stale[*]}" >&2
  status=1
fi
exit $status
