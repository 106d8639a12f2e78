#!/usr/bin/env bash
# Regenerates every app icon (Linux PNGs, macOS .icns, Windows .ico and Store logos) from the
# one source image, src-tauri/icons/source.png (1024x1024, transparent corners).
# Usage: scripts/icons.sh   (after `npm ci` in ui/)
set -euo pipefail
ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
cd "$ROOT"
ui/node_modules/.bin/tauri icon src-tauri/icons/source.png -o src-tauri/icons
# The app is desktop-only: drop the mobile icon sets the CLI also writes.
rm -rf src-tauri/icons/android src-tauri/icons/ios
