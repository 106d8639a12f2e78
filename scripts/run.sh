#!/usr/bin/env bash
# Installs whatever is missing, then starts ArtifactFlow in development mode (hot-reloading UI).
set -euo pipefail
ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
cd "$ROOT"
scripts/setup.sh
exec ui/node_modules/.bin/tauri dev "$@"
