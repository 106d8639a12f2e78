#!/usr/bin/env bash
# Put the local model runtime (crates/runtime, `artifactflow-runtime`) where the installers take
# it from: target/sidecar/artifactflow-runtime-<target triple>[.exe], as Tauri's `externalBin`
# names sidecars. `tauri build --config src-tauri/runtime.conf.json` then installs it beside the
# app (/usr/bin on Linux, the .app's MacOS folder, the install folder on Windows), where the app
# looks for it.
#
# Usage: scripts/stage-runtime.sh debug|release [--universal|--compat]
#   debug      the runtime of the debug build (scripts/test.sh: built already by the small-model
#              step; built here when missing)
#   release    a release build (the release workflow), with Metal on macOS
#   --universal  macOS: one binary for both Apple architectures (lipo), for the universal app
#   --compat   x86-64: also artifactflow-runtime-compat, llama.cpp built without AVX, AVX2,
#              FMA, F16C and BMI2 (which the main build uses: .cargo/config.toml turns on the
#              first four, llama.cpp's defaults BMI2; these variables override both), for the
#              processors that lack them; the app starts it there (crates/models/src/local.rs,
#              cpu_level). It builds in target/compat so the main build's llama.cpp is kept, and
#              on Linux its llama.cpp code is checked for AVX registers (needs objdump).
# RUNTIME_FEATURES: more cargo features of the main runtime, e.g. `vulkan` (the release
# workflow's `gpu` input; needs the Vulkan headers and glslc). The compatible build stays CPU.
set -euo pipefail
ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
cd "$ROOT"
profile=${1:-}
universal=${2:-}
case "$profile" in debug | release) ;; *) echo "usage: $0 debug|release [--universal|--compat]" >&2; exit 2 ;; esac

exe=""
case "$(uname -s)" in MINGW* | MSYS* | CYGWIN* | Windows_NT) exe=".exe" ;; esac
features=()
[ "$(uname -s)" = Darwin ] && features=(--features metal)
[ -n "${RUNTIME_FEATURES:-}" ] && features+=(--features "$RUNTIME_FEATURES")
release=()
[ "$profile" = release ] && release=(--release)
mkdir -p target/sidecar

if [ "$universal" = --universal ]; then
  for arch in aarch64-apple-darwin x86_64-apple-darwin; do
    cargo build -p artifactflow-runtime "${release[@]}" "${features[@]}" --target "$arch"
  done
  lipo -create -output target/sidecar/artifactflow-runtime-universal-apple-darwin \
    "target/aarch64-apple-darwin/$profile/artifactflow-runtime" \
    "target/x86_64-apple-darwin/$profile/artifactflow-runtime"
  echo "staged target/sidecar/artifactflow-runtime-universal-apple-darwin"
  exit 0
fi

triple=$(rustc -vV | sed -n 's/^host: //p')
built="target/$profile/artifactflow-runtime$exe"
if [ "$profile" = release ] || [ ! -x "$built" ]; then
  cargo build -p artifactflow-runtime "${release[@]}" "${features[@]}"
fi
cp "$built" "target/sidecar/artifactflow-runtime-$triple$exe"
echo "staged target/sidecar/artifactflow-runtime-$triple$exe"

if [ "$universal" = --compat ]; then
  case "$triple" in x86_64-*) ;; *) echo "--compat is for x86-64 (this is $triple)" >&2; exit 2 ;; esac
  GGML_AVX=OFF GGML_AVX2=OFF GGML_FMA=OFF GGML_F16C=OFF GGML_BMI2=OFF GGML_AVX_VNNI=OFF \
    GGML_AVX512=OFF CARGO_TARGET_DIR=target/compat \
    cargo build -p artifactflow-runtime "${release[@]}"
  compat="target/compat/$profile/artifactflow-runtime$exe"
  if [ "$(uname -s)" = Linux ]; then
    scripts/check-compat-runtime.sh "$compat"
  fi
  cp "$compat" "target/sidecar/artifactflow-runtime-compat-$triple$exe"
  echo "staged target/sidecar/artifactflow-runtime-compat-$triple$exe"
fi
