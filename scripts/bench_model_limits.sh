#!/usr/bin/env bash
# Peak memory of `artifactflow-cli run` against a model server gone wrong: after a few words it
# streams 400 MB on one line that never ends (or, with `event`, one event that never
# dispatches). The engine's stream limits (`limits:` of a model profile) should stop it after
# about 1 MiB, so the run fails with an error naming the limit and peak RSS stays small.
#
#   scripts/bench_model_limits.sh            # line, 400 MB
#   scripts/bench_model_limits.sh event      # event, 400 MB
#   BYTES=100000000 scripts/bench_model_limits.sh
#   LIMIT=4294967295 scripts/bench_model_limits.sh   # every limit set this high: as if unbounded
#
# A benchmark, not a test: it prints numbers and asserts nothing. Needs GNU time
# (/usr/bin/time, Debian package `time`). Uses CARGO_TARGET_DIR if set (default: target/), debug
# builds unless PROFILE=release.
set -euo pipefail
cd "$(dirname "$0")/.."
shape="${1:-line}"
bytes="${BYTES:-400000000}"
profile="${PROFILE:-debug}"
target="${CARGO_TARGET_DIR:-target}"
[ -x /usr/bin/time ] || { echo "needs GNU time: apt-get install time" >&2; exit 2; }

flag=()
[ "$profile" = release ] && flag=(--release)
cargo build -q "${flag[@]}" -p artifactflow-cli -p artifactflow-test-support --bins
bin="$target/$profile"

work="$(mktemp -d)"
server_pid=""
cleanup() {
  [ -n "$server_pid" ] && kill "$server_pid" 2>/dev/null || true
  rm -rf "$work"
}
trap cleanup EXIT

printf '[{"text": "Partial answer. ", "flood": {"shape": "%s", "bytes": %s}}]\n' \
  "$shape" "$bytes" >"$work/script.json"
"$bin/scripted-model-server" --script "$work/script.json" >"$work/server.out" &
server_pid=$!
for _ in $(seq 100); do
  grep -q LISTENING "$work/server.out" 2>/dev/null && break
  sleep 0.1
done
base="$(sed -n 's/^LISTENING //p' "$work/server.out")"
[ -n "$base" ] || { echo "the scripted model server did not start" >&2; exit 1; }

home="$work/home"
"$bin/artifactflow-cli" --home "$home" status >/dev/null
cat >"$home/config/models.yaml" <<YAML
profiles:
  - name: default
    api: openai
    base_url: "$base/v1"
    model: scripted
YAML
if [ -n "${LIMIT:-}" ]; then
  printf '    limits: {max_line_bytes: %s, max_event_bytes: %s, max_answer_bytes: %s}\n' \
    "$LIMIT" "$LIMIT" "$LIMIT" >>"$home/config/models.yaml"
fi

set +e
/usr/bin/time -v -o "$work/time.txt" \
  "$bin/artifactflow-cli" --home "$home" run --agent lead_agent --no "Answer at length." \
  >"$work/run.out" 2>"$work/run.err"
code=$?
set -e
rss_kb="$(sed -n 's/.*Maximum resident set size (kbytes): //p' "$work/time.txt")"
wall="$(sed -n 's/.*Elapsed (wall clock) time (h:mm:ss or m:ss): //p' "$work/time.txt")"
echo "stream: $shape, $bytes bytes; limits: ${LIMIT:-defaults}; build: $profile"
echo "exit code: $code"
echo "error: $(grep -m1 -i 'limit' "$work/run.err" || tail -n 1 "$work/run.err")"
echo "wall clock: $wall"
echo "peak RSS: $((rss_kb / 1024)) MB ($rss_kb kB)"
