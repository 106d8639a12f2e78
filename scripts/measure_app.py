#!/usr/bin/env python3
"""Startup time and idle memory of the built app, under a virtual display.

Startup = process start until the UI has rendered and made its first backend call (the app
logs `startup_ms`). Idle memory = RSS of the app and every process it started (WebKit web and
network processes), 10 s after startup. Cold = first start on a fresh home (seeds config,
creates the database); warm = second start on the same home.

Run through scripts/measure_app.sh (it provides Xvfb and D-Bus).
"""

import os
import re
import subprocess
import sys
import tempfile
import time
from pathlib import Path

BIN = Path(sys.argv[1] if len(sys.argv) > 1 else Path(__file__).resolve().parents[1] / "target/debug/artifactflow-desktop")


def children(pid: int) -> list[int]:
    out = []
    for entry in Path("/proc").iterdir():
        if entry.name.isdigit():
            try:
                stat = (entry / "stat").read_text()
            except OSError:
                continue
            ppid = int(stat.rsplit(")", 1)[1].split()[1])
            if ppid == pid:
                out.append(int(entry.name))
    return out


def tree(pid: int) -> list[int]:
    pids = [pid]
    for c in children(pid):
        pids.extend(tree(c))
    return pids


def rss_kb(pid: int) -> int:
    try:
        m = re.search(r"VmRSS:\s+(\d+)", Path(f"/proc/{pid}/status").read_text())
        return int(m.group(1)) if m else 0
    except OSError:
        return 0


def measure(home: Path, label: str) -> None:
    env = dict(os.environ, ARTIFACTFLOW_HOME=str(home), XDG_CONFIG_HOME=str(home / "xdg"), XDG_DATA_HOME=str(home / "xdg"))
    for log in (home / "logs").glob("app.*.log"):
        log.unlink()
    proc = subprocess.Popen([str(BIN)], env=env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    startup = None
    deadline = time.monotonic() + 60
    while startup is None and time.monotonic() < deadline:
        for log in (home / "logs").glob("app.*.log"):
            m = re.search(r"startup_ms=(\d+)", log.read_text(errors="replace"))
            if m:
                startup = int(m.group(1))
        time.sleep(0.05)
    time.sleep(10)
    pids = tree(proc.pid)
    total = sum(rss_kb(p) for p in pids)
    print(f"{label:5} startup {startup if startup is not None else '?':>5} ms   idle RSS: app {rss_kb(proc.pid) // 1024} MB, "
          f"app + {len(pids) - 1} WebKit processes {total // 1024} MB")
    proc.terminate()
    proc.wait(10)


with tempfile.TemporaryDirectory() as tmp:
    measure(Path(tmp), "cold")
    measure(Path(tmp), "warm")
