#!/usr/bin/env bash
# Startup time and idle memory (RSS) of the built app under Xvfb; see scripts/measure_app.py.
# Usage: scripts/measure_app.sh [BINARY] [--runs N] [--breakdown] (default target/debug/artifactflow, 3 runs)
# Build first: ui/node_modules/.bin/tauri build --debug --no-bundle   (or a release build)
set -euo pipefail
ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
exec "$ROOT/scripts/with-session.sh" --display python3 "$ROOT/scripts/measure_app.py" "$@"
