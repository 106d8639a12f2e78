#!/usr/bin/env bash
# Installs whatever is missing, then runs every check and test: formatting, lints, type checks,
# unit and integration tests (Rust and UI), and end-to-end tests through the real built app.
set -euo pipefail
ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
cd "$ROOT"
start=$(date +%s)
step() { printf '\n\033[1m== %s (%ss)\033[0m\n' "$*" "$(( $(date +%s) - start ))"; }

step "Setup"
scripts/setup.sh --test
export PATH="$HOME/.cargo/bin:$PATH"

step "UI: type check, lint, unit tests, build"
(cd ui && npm run typecheck && npm run lint && npm test && npx vite build --logLevel warn)

# Everything Rust is built with the feature the Tauri CLI uses for real builds, so the app
# binary for the end-to-end tests reuses the same compiled dependencies.
FEATURES=(--features artifactflow-desktop/custom-protocol)

step "Release workflow: actionlint, and the update feed it publishes"
scripts/lint-workflows.sh
.venv/bin/python -m pytest tests/release -q -p no:cacheprovider

step "Rust: format"
cargo fmt --all --check

step "Rust: clippy"
cargo clippy --workspace --all-targets "${FEATURES[@]}" -- -D warnings

step "Rust: tests"
scripts/with-session.sh cargo test --workspace "${FEATURES[@]}"

step "Small model: agent runs against SmolLM2-135M (llama-cpp-python, CPU)"
scripts/small_model.sh

step "App: debug build with embedded UI, its .deb and .rpm (and the scripted model server the end-to-end tests use)"
# Bundling reuses the debug build and adds about 5 s (no release build, no network).
ui/node_modules/.bin/tauri build --debug --bundles deb rpm --ci
cargo build -p artifactflow-test-support --bin scripted-model-server

step "End-to-end tests (Xvfb + WebDriver)"
scripts/with-session.sh --display .venv/bin/python -m pytest tests/e2e -q -p no:cacheprovider

step "Install test: the .deb installs, its app runs from /usr/bin under Xvfb, and it uninstalls cleanly"
tests/install/test_deb.sh

step "All checks passed"
