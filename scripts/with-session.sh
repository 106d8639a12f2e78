#!/usr/bin/env bash
# Runs a command inside a private D-Bus session with an unlocked gnome-keyring (the real Secret
# Service, as on a Linux desktop) and, with --display, a virtual X display.
# Usage: scripts/with-session.sh [--display] CMD ARGS...
set -euo pipefail
display=0
[ "${1:-}" = "--display" ] && { display=1; shift; }
# shellcheck disable=SC2016 # expanded by the inner shell
inner='eval "$(printf artifactflow-test | gnome-keyring-daemon --unlock --components=secrets)"
export GNOME_KEYRING_CONTROL
exec "$@"'
if [ $display -eq 1 ]; then
  exec xvfb-run -a -s '-screen 0 1280x800x24' dbus-run-session -- bash -c "$inner" with-session "$@"
else
  exec dbus-run-session -- bash -c "$inner" with-session "$@"
fi
