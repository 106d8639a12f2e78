#!/usr/bin/env bash
# Measures the built app (target/debug/artifactflow-desktop, or $1): startup time until the UI
# has rendered and called the backend, and the memory (RSS) of the app and its WebKit
# processes after 10 s idle. Cold = first start on a fresh home. Runs under Xvfb.
# Usage: scripts/measure_app.sh [BINARY]   (build first: ui/node_modules/.bin/tauri build --debug --no-bundle)
set -euo pipefail
ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
BIN=${1:-$ROOT/target/debug/artifactflow-desktop}
[ -x "$BIN" ] || { echo "no app binary at $BIN: build it first" >&2; exit 2; }
inner='
set -euo pipefail
measure() {
  local home=$1 label=$2
  ARTIFACTFLOW_HOME=$home XDG_CONFIG_HOME=$home/xdg XDG_DATA_HOME=$home/xdg "$BIN" >/dev/null 2>&1 &
  local pid=$!
  local deadline=$((SECONDS + 60)) ms=""
  while [ -z "$ms" ] && [ $SECONDS -lt $deadline ]; do
    ms=$(grep -ho "startup_ms=[0-9]*" "$home"/logs/app.*.log 2>/dev/null | tail -n1 | cut -d= -f2 || true)
    sleep 0.1
  done
  sleep 10
  # The app and every process it started (WebKit web and network processes).
  local pids="$pid $(pgrep -P "$pid" | tr "\n" " ")"
  for p in $(pgrep -P "$pid"); do pids="$pids $(pgrep -P "$p" | tr "\n" " ")"; done
  local rss=0 main=0
  for p in $pids; do
    r=$(awk "/VmRSS/{print \$2}" /proc/$p/status 2>/dev/null || echo 0)
    rss=$((rss + r))
  done
  main=$(awk "/VmRSS/{print \$2}" /proc/$pid/status)
  printf "%-5s startup %5s ms   idle RSS: app %4d MB, app + WebKit processes %4d MB\n" "$label" "${ms:-?}" $((main / 1024)) $((rss / 1024))
  kill "$pid"; wait "$pid" 2>/dev/null || true
}
home=$(mktemp -d)
measure "$home" cold
rm -f "$home"/logs/app.*.log
measure "$home" warm
rm -rf "$home"
'
BIN="$BIN" exec xvfb-run -a -s '-screen 0 1280x800x24' dbus-run-session -- bash -c "export BIN=$BIN; $inner"
