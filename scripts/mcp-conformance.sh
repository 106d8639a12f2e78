#!/usr/bin/env bash
# Runs the official MCP conformance suite (@modelcontextprotocol/conformance, pinned in
# tests/mcp/package.json) against our client: every client scenario of spec 2025-11-25, auth
# included, with crates/test-support's mcp-conformance-client (built on the engine's MCP module).
# Prints the pass/fail counts. A failing scenario fails the run unless it is listed in
# tests/mcp/conformance-expected-failures.yml (printed on every run), and a listed scenario
# that passes fails it too, so the list stays true.
# Scenarios run one after the other (about 2 s each): run at once (the suite's --suite mode),
# sse-retry misses its timing window (the server's `retry` of 500 ms, -50/+200 ms) on a loaded
# machine, and gnome-keyring drops requests under many concurrent clients.
# Tokens go to a keyring: run it inside scripts/with-session.sh (test.sh does).
# The 2025-11-25 client scenarios that only a newer suite has (NEXT_SCENARIOS) run with that
# suite, pinned in tests/mcp/next/package.json, and so do the client scenarios of the skills
# extension (SEP-2640: no prefetch; digest, size and frontmatter verified), every one it lists.
# Usage: scripts/mcp-conformance.sh [SCENARIO...]
set -euo pipefail
ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
cd "$ROOT"
export PATH="$ROOT/tests/mcp/node_modules/.bin:$HOME/.cargo/bin:$PATH"   # Node 22 for the suite
SPEC=2025-11-25
EXPECTED=tests/mcp/conformance-expected-failures.yml

# Built with the workspace's features, as scripts/test.sh builds everything (no second build).
cargo build -q --workspace --features artifactflow-desktop/custom-protocol --bin mcp-conformance-client
client="$ROOT/target/debug/mcp-conformance-client"
export ARTIFACTFLOW_KEYRING_SERVICE=artifactflow-mcp-conformance

# Client scenarios of spec $SPEC that only the newer suite (tests/mcp/next) has: run with it.
NEXT_SCENARIOS=(json-schema-2020-12-preservation)
next_suite="$ROOT/tests/mcp/next/node_modules/.bin/conformance"
# The skills extension's client scenarios, as the newer suite lists them.
mapfile -t skill_scenarios < <("$next_suite" list --client | sed -n 's/^  - \(sep-2640-client-[^ ]*\) .*/\1/p')
[ ${#skill_scenarios[@]} -ge 4 ] || { echo "the newer suite lists ${#skill_scenarios[@]} sep-2640 client scenarios (expected 4 or more)" >&2; exit 1; }
NEXT_SCENARIOS+=("${skill_scenarios[@]}")

if [ $# -gt 0 ]; then
  scenarios=("$@")
else
  mapfile -t scenarios < <(conformance list --client --spec-version "$SPEC" | sed -n 's/^  - \([^ ]*\) .*/\1/p')
  for s in "${NEXT_SCENARIOS[@]}"; do
    "$next_suite" list --client | grep -q "^  - $s " \
      || { echo "the newer suite has no client scenario $s" >&2; exit 1; }
    scenarios+=("$s")
  done
fi
[ ${#scenarios[@]} -gt 0 ] || { echo "the suite listed no client scenarios for $SPEC" >&2; exit 1; }
mapfile -t expected < <(sed -n 's/^ *- *\([^ #]*\).*/\1/p' "$EXPECTED")
echo "Expected failures (${EXPECTED}): ${expected[*]:-none}"

out=$(mktemp -d)
trap 'rm -rf "$out"' EXIT
# One scenario: its log, and an "ok" marker when it passed.
run() {
  local s=$1 log="$out/${1//\//_}" suite=conformance
  for n in "${NEXT_SCENARIOS[@]}"; do [ "$n" = "$s" ] && suite=$next_suite; done
  if (cd "$out" && "$suite" client --command "$client" --scenario "$s" -o "$out/results") >"$log.log" 2>&1; then
    touch "$log.ok"
  fi
}
for s in "${scenarios[@]}"; do run "$s"; done

passed=0 failed=0 unexpected=() stale=()
for s in "${scenarios[@]}"; do
  log="$out/${s//\//_}"
  listed=0
  for e in "${expected[@]}"; do [ "$e" = "$s" ] && listed=1; done
  if [ -e "$log.ok" ]; then
    passed=$((passed + 1))
    printf '  ✓ %s\n' "$s"
    [ $listed -eq 1 ] && stale+=("$s")
  else
    failed=$((failed + 1))
    if [ $listed -eq 1 ]; then
      printf '  ~ %s (expected failure)\n' "$s"
    else
      printf '  ✗ %s\n' "$s"
      unexpected+=("$s")
      sed -n '/Failed Checks:/,$p' "$log.log" | head -20 | sed 's/^/      /'
      tail -5 "$out"/results/"$s"-*/stderr.txt 2>/dev/null | sed 's/^/      client: /' || true
    fi
  fi
done
echo "MCP conformance (client scenarios, spec $SPEC and the skills extension): $passed passed, $failed failed (${#expected[@]} expected to fail)"
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
