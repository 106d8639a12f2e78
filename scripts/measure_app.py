#!/usr/bin/env python3
"""Startup time and idle memory of the built app, under a virtual display.

Startup = process start until the UI has rendered and made its first backend call (the app
logs `startup_ms`). Idle memory = RSS of the app and every process it started (WebKit web and
network processes), 10 s after startup. Cold = first start on a fresh home (seeds config,
creates the database); warm = second start on the same home.

Run through scripts/measure_app.sh (it provides Xvfb and D-Bus):
    measure_app.py [BINARY] [--runs N] [--breakdown]   (default: target/debug/artifactflow, 3 runs)
IDLE_WAIT=SECONDS shortens the wait before memory is read (default 10), for startup-only A/B runs.
--breakdown also prints, per run, when each step of the app's start-up ended (setup, engine
open, first page read, main window created; the UI is ready after those) and the app process's resident memory by mapping (library or
anonymous memory, and permissions), largest first: compare two binaries' lists to see where a
difference comes from.
The bare Tauri 2 window (scripts/bare-window) logs `startup_ms` the same way, so the two are
measured alike.
"""

import os
import re
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ARGS = sys.argv[1:]
RUNS = 3
if "--runs" in ARGS:
    i = ARGS.index("--runs")
    RUNS = int(ARGS[i + 1])
    del ARGS[i : i + 2]
BREAKDOWN = "--breakdown" in ARGS
if BREAKDOWN:
    ARGS.remove("--breakdown")
BIN = Path(ARGS[0] if ARGS else Path(__file__).resolve().parents[1] / "target/debug/artifactflow")


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


def breakdown(pid: int, top: int = 15) -> None:
    """The process's RSS by mapping (file name or [anon]/[heap], and permissions)."""
    groups: dict[str, int] = {}
    current = None
    try:
        lines = Path(f"/proc/{pid}/smaps").read_text().splitlines()
    except OSError:
        return
    for line in lines:
        m = re.match(r"^[0-9a-f]+-[0-9a-f]+ (\S+) \S+ \S+ \S+\s*(.*)$", line)
        if m:
            current = f"{os.path.basename(m.group(2)) or '[anon]'} {m.group(1)}"
            continue
        m = re.match(r"^Rss:\s+(\d+)", line)
        if m and current:
            groups[current] = groups.get(current, 0) + int(m.group(1))
    for name, kb in sorted(groups.items(), key=lambda g: -g[1])[:top]:
        print(f"        {kb / 1024:6.1f} MB  {name}")


def measure(home: Path, label: str) -> tuple[int | None, int, int]:
    env = dict(os.environ, ARTIFACTFLOW_HOME=str(home), XDG_CONFIG_HOME=str(home / "xdg"), XDG_DATA_HOME=str(home / "xdg"), XDG_CACHE_HOME=str(home / "xdg-cache"))
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
    time.sleep(float(os.environ.get("IDLE_WAIT", "10")))
    pids = tree(proc.pid)
    app_mb = rss_kb(proc.pid) // 1024
    total_mb = sum(rss_kb(p) for p in pids) // 1024
    print(f"{label:5} startup {startup if startup is not None else '?':>5} ms   idle RSS: app {app_mb} MB, "
          f"app + {len(pids) - 1} WebKit processes {total_mb} MB", flush=True)
    if BREAKDOWN:
        # The app's start-up steps (src-tauri/src/lib.rs `startup_phase`), then its memory.
        for log in (home / "logs").glob("app.*.log"):
            phases = re.findall(r"start-up: (.+?) ms=(\d+)", log.read_text(errors="replace"))
            print("        " + ", ".join(f"{name} {ms} ms" for name, ms in phases))
        breakdown(proc.pid)
    proc.terminate()
    proc.wait(10)
    return startup, app_mb, total_mb


def spread(values: list) -> str:
    values = sorted(v for v in values if v is not None)
    if not values:
        return "?"
    return f"{values[0]}" if values[0] == values[-1] else f"{values[0]}-{values[-1]}"


print(f"{BIN} ({RUNS} runs)")
results: dict[str, list[tuple[int | None, int, int]]] = {"cold": [], "warm": []}
for _ in range(RUNS):
    with tempfile.TemporaryDirectory() as tmp:
        for label in ("cold", "warm"):
            results[label].append(measure(Path(tmp), label))
for label, rows in results.items():
    print(f"{label} summary: startup {spread([r[0] for r in rows])} ms, app {spread([r[1] for r in rows])} MB, "
          f"all processes {spread([r[2] for r in rows])} MB")
