#!/usr/bin/env bash
# Installs whatever ArtifactFlow needs and is missing, on Debian/Ubuntu. Idempotent: a second
# run installs nothing. Usage: scripts/setup.sh [--test]   (--test adds what the tests need)
set -euo pipefail
ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
cd "$ROOT"

want_test=0
[ "${1:-}" = "--test" ] && want_test=1

say() { printf '\033[1m== %s\033[0m\n' "$*"; }
die() { printf 'error: %s\n' "$*" >&2; exit 1; }
as_root() { if [ "$(id -u)" -eq 0 ]; then "$@"; else sudo "$@"; fi; }

# System libraries for building a Tauri 2 app (WebKitGTK 4.1 and friends).
packages=(build-essential pkg-config curl file libssl-dev libwebkit2gtk-4.1-dev libsoup-3.0-dev
  libjavascriptcoregtk-4.1-dev libgtk-3-dev librsvg2-dev libayatana-appindicator3-dev libxdo-dev
  dbus dbus-x11 gnome-keyring libsecret-1-dev)
# The local model runtime (crates/runtime) builds llama.cpp from source: cmake, and libclang for
# the bindings.
packages+=(cmake libclang-dev)
# Headless end-to-end tests: a virtual display, WebKit's WebDriver, the keyring tools, screenshots.
[ $want_test -eq 1 ] && packages+=(xvfb xauth webkit2gtk-driver libsecret-tools imagemagick)
# The install test: xwininfo finds the installed app's window.
[ $want_test -eq 1 ] && packages+=(x11-utils)
# The runtime for older processors is run on an emulated one without AVX2 (qemu-x86_64 -cpu
# Westmere).
[ $want_test -eq 1 ] && packages+=(qemu-user)
python3 -m venv --help >/dev/null 2>&1 || packages+=(python3 python3-venv)
command -v node >/dev/null 2>&1 || packages+=(nodejs npm)

if command -v apt-get >/dev/null 2>&1; then
  missing=()
  for p in "${packages[@]}"; do
    dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
  done
  if [ ${#missing[@]} -gt 0 ]; then
    say "Installing system packages: ${missing[*]}"
    as_root apt-get update -qq
    as_root env DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends "${missing[@]}"
  fi
else
  say "Not a Debian/Ubuntu system: install the Tauri prerequisites yourself (see README)"
fi

# Toolchains.
command -v cargo >/dev/null 2>&1 || die "Rust is missing: install it from https://rustup.rs, then run this again"
# rustup installed but no default toolchain in this RUSTUP_HOME (a new user account, or a fresh
# HOME): use a stable toolchain already on the machine if there is one (no download), else let
# rustup fetch stable.
if ! cargo --version >/dev/null 2>&1 && command -v rustup >/dev/null 2>&1; then
  existing=""
  for dir in /root/.rustup/toolchains/stable-* /usr/local/rustup/toolchains/stable-*; do
    [ -x "$dir/bin/cargo" ] && [ "$dir" != "${RUSTUP_HOME:-}/toolchains/${dir##*/}" ] && existing=$dir && break
  done
  if [ -n "$existing" ]; then
    say "rustup has no default toolchain: linking the one in $existing"
    rustup toolchain link machine-stable "$existing"
    rustup default machine-stable
  else
    say "rustup has no default toolchain: installing stable"
    rustup default stable
  fi
fi
cargo --version >/dev/null 2>&1 || die "cargo does not run: set a default toolchain with 'rustup default stable'"
node_version=$(node -p 'process.versions.node' 2>/dev/null || echo 0)
node -e 'const [a,b]=process.versions.node.split(".").map(Number); process.exit(a>22||(a===22&&b>=12)||(a===20&&b>=19)||a===21?0:1)' 2>/dev/null ||
  die "Node.js $node_version is too old: ArtifactFlow's UI needs Node.js 20.19+ or 22.12+ (https://nodejs.org)"
if [ $want_test -eq 1 ]; then
  { cargo clippy --version && cargo fmt --version; } >/dev/null 2>&1 || rustup component add clippy rustfmt
fi

# libpdfium, the PDF engine the extraction worker (crates/extract, `artifactflow-extract`) binds
# to at run time: the build inside PyPI's pypdfium2 wheel (nothing of Python is used), pinned with
# its sha256 in scripts/pdfium.lock. The wheel is kept in the cache between runs and checked each
# time; the library is unpacked to target/pdfium/, where the worker finds it beside target/debug.
pdfium_platform=""
case "$(uname -s)-$(uname -m)" in Linux-x86_64) pdfium_platform=manylinux_2_17_x86_64 ;; esac
pdfium_pin=$(awk -v p="$pdfium_platform" '$1 == p { print $2, $3, $4 }' scripts/pdfium.lock)
if [ -z "$pdfium_platform" ] || [ -z "$pdfium_pin" ]; then
  say "No libpdfium pinned for $(uname -s) $(uname -m) in scripts/pdfium.lock: PDFs will not be read (point ARTIFACTFLOW_PDFIUM at a libpdfium to read them)"
else
  read -r pdfium_version pdfium_sha pdfium_member <<<"$pdfium_pin"
  pdfium_out=target/pdfium/${pdfium_member##*/}
  if [ ! -f "$pdfium_out" ] || [ "$(cat target/pdfium/.wheel-sha256 2>/dev/null)" != "$pdfium_sha" ]; then
    pdfium_cache="${ARTIFACTFLOW_PDFIUM_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/artifactflow/pdfium}"
    pdfium_wheel="$pdfium_cache/pypdfium2-$pdfium_version-py3-none-$pdfium_platform.whl"
    pdfium_wheel_ok() { [ -f "$pdfium_wheel" ] && [ "$(sha256sum "$pdfium_wheel" | cut -d' ' -f1)" = "$pdfium_sha" ]; }
    command -v python3 >/dev/null 2>&1 || die "python3 is needed to download and unpack libpdfium: install it, then run this again"
    if ! pdfium_wheel_ok; then
      say "Downloading libpdfium (pypdfium2 $pdfium_version wheel, about 4 MB)"
      mkdir -p "$pdfium_cache"
      # pip as it is, or one in a throwaway virtual environment where the system Python has none.
      pip=(python3 -m pip)
      if ! python3 -m pip --version >/dev/null 2>&1; then
        [ -x "$pdfium_cache/.pip/bin/pip" ] || python3 -m venv "$pdfium_cache/.pip"
        pip=("$pdfium_cache/.pip/bin/pip")
      fi
      # Downloaded to a temporary folder and moved into place, so an interrupted download leaves
      # nothing that looks complete.
      pdfium_dl=$(mktemp -d "$pdfium_cache/.download.XXXXXX")
      "${pip[@]}" download --quiet --disable-pip-version-check --no-deps --only-binary=:all: \
        --platform "$pdfium_platform" --dest "$pdfium_dl" "pypdfium2==$pdfium_version" ||
        { rm -rf "$pdfium_dl"; die "downloading the pypdfium2 $pdfium_version wheel from PyPI failed"; }
      mv "$(find "$pdfium_dl" -maxdepth 1 -name "pypdfium2-$pdfium_version-*.whl" | head -n1)" "$pdfium_wheel"
      rm -rf "$pdfium_dl"
      pdfium_wheel_ok || { rm -f "$pdfium_wheel"; die "the pypdfium2 $pdfium_version wheel does not match the sha256 in scripts/pdfium.lock"; }
    fi
    mkdir -p target/pdfium
    python3 - "$pdfium_wheel" "$pdfium_member" "$pdfium_out" <<'PY'
import shutil, sys, zipfile
wheel, member, out = sys.argv[1:]
with zipfile.ZipFile(wheel) as z, z.open(member) as src, open(out + ".part", "wb") as dst:
    shutil.copyfileobj(src, dst)
PY
    mv "$pdfium_out.part" "$pdfium_out"
    echo "$pdfium_sha" > target/pdfium/.wheel-sha256
    say "libpdfium unpacked to $pdfium_out"
  fi
fi

# Front-end dependencies, exactly as locked.
if [ ! -d ui/node_modules ] || [ ui/package-lock.json -nt ui/node_modules/.package-lock.json ]; then
  say "Installing UI dependencies (npm ci)"
  (cd ui && npm ci --no-audit --no-fund)
fi

if [ $want_test -eq 1 ]; then
  # The WebDriver bridge for Tauri apps.
  if ! command -v tauri-driver >/dev/null 2>&1 && [ ! -x "$HOME/.cargo/bin/tauri-driver" ]; then
    say "Installing tauri-driver"
    cargo install tauri-driver --version '^2' --locked
  fi
  # Python packages for the end-to-end tests, in a project-local virtual environment.
  if [ ! -x .venv/bin/pytest ] || [ tests/e2e/requirements.txt -nt .venv/.installed ]; then
    say "Installing end-to-end test packages into .venv"
    python3 -m venv .venv
    .venv/bin/pip install --quiet --disable-pip-version-check -r tests/e2e/requirements.txt
    touch .venv/.installed
  fi
fi

if [ $want_test -eq 1 ]; then
  # Real MCP servers the MCP tests run against (@modelcontextprotocol/server-everything, and
  # the SDKs of both protocol generations for our small servers) and the Node.js 22 the
  # conformance suite needs (npm's `node` package: the system Node stays as it is), pinned in
  # tests/mcp/package-lock.json.
  if [ ! -d tests/mcp/node_modules ] || [ tests/mcp/package-lock.json -nt tests/mcp/node_modules/.package-lock.json ]; then
    say "Installing MCP test servers (npm ci --prefix tests/mcp)"
    npm ci --prefix tests/mcp --no-audit --no-fund
  fi
  # The official MCP conformance suite (pinned in tests/mcp/conformance/package-lock.json).
  if [ ! -d tests/mcp/conformance/node_modules ] || [ tests/mcp/conformance/package-lock.json -nt tests/mcp/conformance/node_modules/.package-lock.json ]; then
    say "Installing the MCP conformance suite (npm ci --prefix tests/mcp/conformance)"
    npm ci --prefix tests/mcp/conformance --no-audit --no-fund
  fi
  # GitHub's REST API description (@octokit/openapi, pinned in tests/openapi/package-lock.json)
  # for the OpenAPI import test and benchmark; too big to commit.
  if [ ! -d tests/openapi/node_modules ] || [ tests/openapi/package-lock.json -nt tests/openapi/node_modules/.package-lock.json ]; then
    say "Installing OpenAPI test descriptions (npm ci --prefix tests/openapi)"
    npm ci --prefix tests/openapi --no-audit --no-fund
  fi
fi
