#!/usr/bin/env bash
# Check that a runtime built for processors without AVX2 (scripts/stage-runtime.sh --compat)
# really is one: no instruction of llama.cpp's code (functions named ggml… or llama…) may use
# AVX registers (ymm, zmm), a VEX-encoded instruction (AVX, AVX2, FMA, F16C all are) or BMI2.
# Rust code may hold AVX paths it chooses at run time (memchr's); those are not ggml's or
# llama.cpp's. Prints the first offenders and their count; exits 1 when there are any.
#
# Usage: scripts/check-compat-runtime.sh BINARY   (x86-64, needs objdump from binutils)
set -euo pipefail
bin=${1:?usage: $0 BINARY}
command -v objdump >/dev/null || { echo "objdump is missing (binutils)" >&2; exit 2; }
objdump -d --no-show-raw-insn -C "$bin" | awk '
  /^[0-9a-f]+ <.*>:$/ { fn = $0; ours = (fn ~ /ggml|<llama_|llama_model|llama_context|llama_vocab|llama_sampler/); next }
  ours && ($0 ~ /%[yz]mm/ || $0 ~ /\t(v[a-z0-9]+|shlx|sarx|shrx|pdep|pext|bzhi|mulx|rorx)[ \t]/) {
    n++
    if (n <= 5) print "AVX in " fn "\n   " $0
  }
  END {
    if (n > 0) { print n " instructions of llama.cpp need AVX, AVX2, FMA, F16C or BMI2" > "/dev/stderr"; exit 1 }
    print "no instruction of llama.cpp needs AVX, AVX2, FMA, F16C or BMI2"
  }'
