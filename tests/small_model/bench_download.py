"""Model downloads, measured: `artifactflow-cli models pull` of SmolLM2-135M (98 MB) from the
stand-in Hugging Face Hub (`stub-hub`, through HF_ENDPOINT) on 127.0.0.1. Prints a table; fails
only when the harness breaks (a pull that fails, a hash that does not match).

1. throughput at the stub's own rate (BENCH_DOWNLOAD_RATE bytes/s, default 40 MB/s): the
   pull's download time against the time the stub needs to send the file;
2. the same with no rate limit (what the download, hashing and install cost on this machine);
3. resume after a kill: a pull at the rate is killed (SIGKILL) once 40 % is on disk; the next
   pull, unlimited, sends `Range: bytes=N-` and downloads only the rest.

Environment: SMALL_MODEL_GGUF, ARTIFACTFLOW_CLI, ARTIFACTFLOW_STUB_HUB (default: stub-hub beside
the CLI).
"""

import hashlib
import json
import os
import signal
import subprocess
import sys
import tempfile
import time
import urllib.request
from pathlib import Path

GGUF = Path(os.environ["SMALL_MODEL_GGUF"])
CLI = os.environ.get("ARTIFACTFLOW_CLI", "target/debug/artifactflow-cli")
STUB = os.environ.get("ARTIFACTFLOW_STUB_HUB", str(Path(CLI).parent / "stub-hub"))
RATE = int(os.environ.get("BENCH_DOWNLOAD_RATE", str(40_000_000)))
REPO_FILE = "bench/SmolLM2-GGUF/smollm2-135m-q4_1.gguf"
NAME = "smollm2-135m-q4_1.gguf"


class Hub:
    def __init__(self):
        self.proc = subprocess.Popen([STUB, "--file", f"{REPO_FILE}={GGUF}"], stdout=subprocess.PIPE, text=True)
        line = self.proc.stdout.readline().strip()
        if not line.startswith("LISTENING "):
            sys.exit(f"stub-hub did not start: {line}")
        self.url = line.split(" ", 1)[1]

    def behave(self, **behaviour):
        request = urllib.request.Request(f"{self.url}/_behaviour", data=json.dumps(behaviour).encode(),
                                         headers={"content-type": "application/json"})
        urllib.request.urlopen(request, timeout=10).close()

    def ranges(self) -> list:
        with urllib.request.urlopen(f"{self.url}/_requests", timeout=10) as answer:
            return [r["range"] for r in json.load(answer) if r["method"] == "GET" and "/resolve/" in r["path"]]

    def baseline(self) -> float:
        """Seconds a plain client (Python's urllib, reading 1 MB at a time) takes to fetch the file."""
        started = time.monotonic()
        with urllib.request.urlopen(f"{self.url}/{REPO_FILE.replace('/smollm2', '/resolve/main/smollm2', 1)}",
                                    timeout=120) as answer:
            while answer.read(1 << 20):
                pass
        return time.monotonic() - started

    def stop(self):
        self.proc.kill()
        self.proc.wait(10)


def pull(home: Path, hub: Hub) -> tuple[float, dict]:
    started = time.monotonic()
    out = subprocess.run([CLI, "--home", str(home), "models", "pull", REPO_FILE, "--json"],
                         capture_output=True, text=True, timeout=600, env=dict(os.environ, HF_ENDPOINT=hub.url))
    took = time.monotonic() - started
    if out.returncode != 0:
        sys.exit(f"the pull failed: {out.stderr}")
    return took, json.loads(out.stdout)


def main() -> None:
    size = GGUF.stat().st_size
    sha = hashlib.sha256(GGUF.read_bytes()).hexdigest()
    hub = Hub()
    rows = []
    try:
        with tempfile.TemporaryDirectory() as tmp:
            # 1. At the stub's rate; 2. unlimited. Each beside a plain client on the same stub.
            for what, behaviour in [(f"at the stub's rate ({RATE / 1e6:.0f} MB/s)", {"rate": RATE}),
                                    ("no rate limit", {})]:
                hub.behave(**behaviour)
                plain = hub.baseline()
                took, model = pull(Path(tmp) / what.split()[0], hub)
                assert model["sha256"] == sha, model
                rows.append((what, took, size / took / 1e6,
                             f"a plain client: {plain:.2f} s ({size / plain / 1e6:.0f} MB/s); "
                             f"the pull adds {took - plain:.2f} s (start, sha256, install)"))

            # 3. Killed at 40 %, then resumed.
            home = Path(tmp) / "killed"
            hub.behave(rate=RATE // 4)
            part = home / "data" / "models" / ".downloads" / f"{NAME}.part"
            proc = subprocess.Popen([CLI, "--home", str(home), "models", "pull", REPO_FILE],
                                    stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
                                    env=dict(os.environ, HF_ENDPOINT=hub.url))
            deadline = time.monotonic() + 120
            while not (part.exists() and part.stat().st_size >= size * 0.4):
                if proc.poll() is not None or time.monotonic() > deadline:
                    sys.exit("the pull to kill ended or stalled before 40 %")
                time.sleep(0.01)
            proc.send_signal(signal.SIGKILL)
            proc.wait(10)
            kept = part.stat().st_size
            hub.behave()
            took, model = pull(home, hub)
            assert model["sha256"] == sha, model
            last = hub.ranges()[-1]
            assert last == f"bytes={kept}-", (last, kept)
            rows.append(("resumed after kill -9", took, (size - kept) / took / 1e6,
                         f"asked {last}: {kept / size * 100:.0f} % kept, {(size - kept) / 1e6:.1f} MB fetched; sha256 matches"))
    finally:
        hub.stop()

    print(f"\nModel download, {GGUF.name} ({size / 1e6:.1f} MB) from the stand-in Hub on 127.0.0.1")
    print(f"{'':32} {'seconds':>8} {'MB/s':>8}  note")
    for what, took, mbps, note in rows:
        print(f"{what:32} {took:8.2f} {mbps:8.1f}  {note}")


if __name__ == "__main__":
    main()
