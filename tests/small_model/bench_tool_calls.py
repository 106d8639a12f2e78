"""Benchmark, not a test (pytest collects test_*.py only): text vs native vs guided tool calls
with the real small model of scripts/small_model.sh (SmolLM2-135M-Instruct through
llama-cpp-python, and through the app's own runtime).

The same 20 small tasks (12 "save a note", 8 "read an artifact"; each needs exactly one call)
run through `artifactflow-cli run`, one conversation per task, in each mode:

- text:    `tool_calls: text` against the server scripts/small_model.sh started (the GGUF's own
           ChatML template): the tools are described in the system prompt, the model writes
           XML <tool_call> blocks.
- native:  `tool_calls: native` against a second server started here with
           `--chat_format chatml-function-calling`: the tools go in the request's `tools`, as
           the engine sends them (streamed, no `tool_choice`).
- native, tool_choice=auto (proxy): the same, through a small proxy started here that adds
           `tool_choice: "auto"` and asks the server for one JSON body instead of a stream.
           llama-cpp-python 0.3.36's chatml-function-calling reads `tools` only when a
           `tool_choice` is given, and refuses `tool_choice: "auto"` with `stream: true`
           ("Automatic streaming tool choice is not supported"); the engine sends no
           `tool_choice` and always streams, so this row shows what the model does when the
           server's function calling is really used. The engine reads a non-streamed body too.

- runtime text:   `api: local` (the app's own llama.cpp runtime, started by the CLI) with
           `guided_calls: off`: the text row on the built-in runtime.
- runtime guided: the same with `guided_calls: on`: the request carries the grammar of the
           agent's calls, which the runtime's sampler follows from `<tool_call>` on.

For each run it looks at the first assistant answer (depth 0) and its `tool_calls` rows. The
answer "yields a valid call" when a row names a tool the agent has (create_artifact,
read_artifact) with every required parameter as a non-empty string (create_artifact: id,
title, content; read_artifact: id) and no parameter the tool does not have.
"As asked": of those, the answers whose valid call is the tool the task asks for with the id it
names (a grammar can force the shape of a call, not its sense).

Exits 0 whatever the model does; 2 when the harness breaks (a server does not start, the CLI
panics or exits with an unexpected code, a run hangs past its timeout).

Environment (set by scripts/small_model.sh): ARTIFACTFLOW_CLI, SMALL_MODEL_GGUF,
SMALL_MODEL_BASE_URL (the running default server; one is started when unset),
SMALL_MODEL_THREADS (default 1). BENCH_MAX_TOKENS (default 192), BENCH_PROXY=1 to add the proxy
row (6-9 more minutes on a busy 2-core machine: chatml-function-calling ignores max_tokens there), BENCH_KEEP=1 to keep the homes and server logs.
"""

import http.server
import json
import os
import shutil
import socket
import sqlite3
import subprocess
import sys
import tempfile
import threading
import time
import urllib.error
import urllib.request
from importlib.metadata import version
from pathlib import Path

AGENT = "notes"
ROLE_PROMPT = (
    "You are a notes assistant. You keep the user's notes as artifacts. "
    "Use the tools to do what the user asks."
)
# id, title, text
SAVES = [
    ("dentist", "Dentist", "The dentist appointment is on Friday at 3 pm."),
    ("groceries", "Groceries", "Buy milk, eggs and bread."),
    ("wifi", "Wi-Fi password", "The guest Wi-Fi password is sunflower42."),
    ("meeting", "Team meeting", "The team meeting moved to Tuesday at 10."),
    ("birthday", "Anna's birthday", "Anna's birthday is on 14 March."),
    ("car", "Car service", "The car needs a service before June."),
    ("books", "Books to read", "Read Dune and The Hobbit this summer."),
    ("plants", "Plants", "Water the plants every Sunday."),
    ("gym", "Gym", "The gym opens at 6 am on weekdays."),
    ("recipe", "Pancakes", "Pancakes: 2 eggs, 250 ml milk, 125 g flour."),
    ("train", "Train", "The train to Berlin leaves at 8:15 from platform 4."),
    ("ideas", "Blog ideas", "Write about home-made bread and bike repair."),
]
READS = ["dentist", "travel", "budget", "notes", "todo", "recipe", "packing", "contacts"]
# (task, the tool and id it asks for)
TASKS = [
    (f'Save a note with id "{i}", title "{t}", saying: {x}', "create_artifact", i)
    for i, t, x in SAVES
] + [(f'Read the artifact with id "{i}".', "read_artifact", i) for i in READS]
assert len(TASKS) == 20

TOOLS = {  # name: (required, allowed)
    "create_artifact": ({"id", "title", "content"}, {"id", "title", "content", "content_type"}),
    "read_artifact": ({"id"}, {"id", "version", "offset", "limit"}),
}

RUN_TIMEOUT_S = 300  # a hang guard: at most 2 requests of at most BENCH_MAX_TOKENS tokens
SERVER_START_S = 120


class HarnessError(Exception):
    pass


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def wait_ready(base_url: str, proc: subprocess.Popen, log: Path) -> None:
    deadline = time.monotonic() + SERVER_START_S
    while time.monotonic() < deadline:
        if proc.poll() is not None:
            raise HarnessError(f"the model server exited ({proc.returncode}):\n{tail(log)}")
        try:
            urllib.request.urlopen(f"{base_url}/models", timeout=2)
            return
        except (urllib.error.URLError, OSError):
            time.sleep(0.5)
    raise HarnessError(f"the model server did not answer within {SERVER_START_S} s:\n{tail(log)}")


def tail(path: Path, n: int = 30) -> str:
    try:
        return "\n".join(path.read_text(errors="replace").splitlines()[-n:])
    except OSError:
        return ""


def start_server(gguf: str, work: Path, name: str, chat_format: str | None):
    port = free_port()
    log = work / f"server-{name}.log"
    cmd = [sys.executable, "-m", "llama_cpp.server", "--model", gguf, "--model_alias", "smollm2",
           "--host", "127.0.0.1", "--port", str(port), "--n_ctx", "4096",
           "--n_threads", os.environ.get("SMALL_MODEL_THREADS", "1"), "--seed", "1234"]
    if chat_format:
        cmd += ["--chat_format", chat_format]
    proc = subprocess.Popen(cmd, stdout=log.open("w"), stderr=subprocess.STDOUT,
                            stdin=subprocess.DEVNULL)
    base_url = f"http://127.0.0.1:{port}/v1"
    try:
        wait_ready(base_url, proc, log)
    except BaseException:
        stop(proc)
        raise
    return proc, base_url


def stop(proc: subprocess.Popen) -> None:
    if proc.poll() is None:
        proc.terminate()
        try:
            proc.wait(10)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait()


def start_proxy(upstream: str):
    """Forwards to `upstream`, adding tool_choice "auto" and asking for one JSON body."""

    class Handler(http.server.BaseHTTPRequestHandler):
        def log_message(self, *args):
            pass

        def do_GET(self):
            self.forward(None)

        def do_POST(self):
            body = json.loads(self.rfile.read(int(self.headers.get("content-length", 0))))
            if body.get("tools"):
                body["tool_choice"] = "auto"
            body["stream"] = False
            body.pop("stream_options", None)
            self.forward(json.dumps(body).encode())

        def handle_one_request(self):
            try:
                super().handle_one_request()
            except (BrokenPipeError, ConnectionResetError):
                pass  # the engine gave up waiting (its timeout); the run reports that itself

        def forward(self, data):
            path = self.path[len("/v1"):] if self.path.startswith("/v1") else self.path
            req = urllib.request.Request(upstream + path, data=data,
                                         headers={"content-type": "application/json"})
            try:
                with urllib.request.urlopen(req, timeout=RUN_TIMEOUT_S) as r:
                    status, payload = r.status, r.read()
            except urllib.error.HTTPError as e:
                status, payload = e.code, e.read()
            self.send_response(status)
            self.send_header("content-type", "application/json")
            self.send_header("content-length", str(len(payload)))
            self.end_headers()
            self.wfile.write(payload)

    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    return server, f"http://127.0.0.1:{server.server_address[1]}/v1"


def cli_run(cli: str, args: list[str], timeout: float) -> subprocess.CompletedProcess:
    try:
        out = subprocess.run([cli, *args], capture_output=True, text=True, timeout=timeout,
                             stdin=subprocess.DEVNULL, env=dict(os.environ, RUST_BACKTRACE="1"))
    except subprocess.TimeoutExpired:
        raise HarnessError(f"`artifactflow-cli {' '.join(args[:4])} …` did not end within {timeout} s")
    both = out.stdout + out.stderr
    if "panicked" in both or out.returncode not in (0, 1):
        raise HarnessError(f"`artifactflow-cli {' '.join(args[:4])} …` exited {out.returncode}:\n{both[-3000:]}")
    return out


def make_home(cli: str, root: Path, name: str, base_url: str, mode: str, max_tokens: int) -> tuple[Path, str]:
    """A home whose `smol` profile reaches the model at `base_url`, or, for a `local:<gguf>`
    base_url, runs it in the app's own runtime (mode `text` or `text+guided`)."""
    home = root / f"home-{name.replace('+', '-').replace(' ', '-')}"
    home.mkdir()
    out = cli_run(cli, ["--home", str(home), "status", "--json"], 60)
    if out.returncode != 0:
        raise HarnessError(f"status failed: {out.stderr}")
    status = json.loads(out.stdout)
    config = Path(status["config_dir"])
    if base_url.startswith("local:"):
        where = (
            "    api: local\n"
            f'    model: "{base_url[len("local:"):]}"\n'
            f"    guided_calls: {'on' if mode == 'text+guided' else 'off'}\n"
        )
        mode = "text"
    else:
        where = f'    api: openai\n    base_url: "{base_url}"\n    model: smollm2\n'
    (config / "models.yaml").write_text(
        "profiles:\n"
        "  - name: smol\n"
        f"{where}"
        f"    max_tokens: {max_tokens}\n"
        "    temperature: 0\n"
        "    timeout: 120\n"
        f"    tool_calls: {mode}\n"
    )
    (config / "agents" / f"{AGENT}.md").write_text(
        "---\n"
        f"name: {AGENT}\n"
        'description: "A notes assistant for the tool-call benchmark"\n'
        "model: smol\n"
        "tools:\n"
        "  create_artifact: auto\n"
        "  read_artifact: auto\n"
        "max_tool_rounds: 1\n"
        "---\n\n"
        f"{ROLE_PROMPT}\n"
    )
    check = cli_run(cli, ["--home", str(home), "check"], 60)
    if check.returncode != 0:
        raise HarnessError(f"check failed:\n{check.stdout}{check.stderr}")
    return home, status["database"]


def valid(tool: str, params_json: str) -> bool:
    if tool not in TOOLS:
        return False
    try:
        params = json.loads(params_json)
    except ValueError:
        return False
    if not isinstance(params, dict):
        return False
    required, allowed = TOOLS[tool]
    return set(params) <= allowed and all(
        isinstance(params.get(p), str) and params[p].strip() for p in required
    )


def run_mode(cli: str, work: Path, name: str, base_url: str, mode: str, max_tokens: int) -> dict:
    home, database = make_home(cli, work, name, base_url, mode, max_tokens)
    row = dict(name=name, valid=0, as_asked=0, no_call=0, invalid=0, failed=0, via_native=0, via_xml=0,
               seconds=0.0, examples=[])
    started = time.monotonic()
    for n, (task, want_tool, want_id) in enumerate(TASKS):
        conversation = f"bench-{n:02d}"
        out = cli_run(cli, ["--home", str(home), "run", "--agent", AGENT, "--yes",
                            "--conversation", conversation, task], RUN_TIMEOUT_S)
        db = sqlite3.connect(f"file:{database}?mode=ro", uri=True)
        try:
            first = db.execute(
                "SELECT id, content FROM messages WHERE conversation_id = ? AND role = 'assistant'"
                " AND depth = 0 ORDER BY id LIMIT 1", (conversation,)).fetchone()
            calls = [] if first is None else db.execute(
                "SELECT tool, params, provider_call_id FROM tool_calls WHERE message_id = ?"
                " ORDER BY position", (first[0],)).fetchall()
        finally:
            db.close()
        if first is None:
            row["failed"] += 1
            row["examples"].append((n, "run failed: " + (out.stderr.strip().splitlines() or [""])[-1]))
            continue
        good = [c for c in calls if valid(c[0], c[1])]
        if good:
            row["valid"] += 1
            if any(c[0] == want_tool and json.loads(c[1]).get("id") == want_id for c in good):
                row["as_asked"] += 1
        elif calls:
            row["invalid"] += 1
        else:
            row["no_call"] += 1
        for c in good:
            row["via_native" if c[2] is not None else "via_xml"] += 1
        if len(row["examples"]) < 3 and not good:
            row["examples"].append((n, (first[1] or "").strip().replace("\n", " ")[:160]
                                    + (f"  calls: {[(c[0], c[1][:80]) for c in calls]}" if calls else "")))
    row["seconds"] = time.monotonic() - started
    return row


def main() -> int:
    cli = os.environ.get("ARTIFACTFLOW_CLI")
    gguf = os.environ.get("SMALL_MODEL_GGUF")
    if not cli or not gguf:
        print("set ARTIFACTFLOW_CLI and SMALL_MODEL_GGUF (scripts/small_model.sh does)", file=sys.stderr)
        return 2
    max_tokens = int(os.environ.get("BENCH_MAX_TOKENS", "192"))
    work = Path(tempfile.mkdtemp(prefix="bench-tool-calls."))
    servers = []
    proxy = None
    rows = []
    try:
        text_url = os.environ.get("SMALL_MODEL_BASE_URL")
        if not text_url:
            proc, text_url = start_server(gguf, work, "text", None)
            servers.append(proc)
        proc, native_url = start_server(gguf, work, "native", "chatml-function-calling")
        servers.append(proc)
        plan = [("text", text_url, "text"), ("native", native_url, "native"),
                ("runtime text", f"local:{gguf}", "text"),
                ("runtime guided", f"local:{gguf}", "text+guided")]
        if os.environ.get("BENCH_PROXY", "0") == "1":
            proxy, proxy_url = start_proxy(native_url)
            plan.append(("native+auto*", proxy_url, "native"))
        for name, url, mode in plan:
            print(f"  {name}: 20 tasks …", flush=True)
            rows.append(run_mode(cli, work, name, url, mode, max_tokens))
    except HarnessError as e:
        print(f"benchmark harness error: {e}", file=sys.stderr)
        return 2
    finally:
        if proxy:
            proxy.shutdown()
        for proc in servers:
            stop(proc)
        if os.environ.get("BENCH_KEEP") == "1":
            print(f"homes and server logs kept in {work}")
        else:
            shutil.rmtree(work, ignore_errors=True)

    pct = lambda k: f"{k:>2}/20 ({100 * k // 20:>3}%)"  # noqa: E731
    print()
    print(f"Tool-call format benchmark: SmolLM2-135M-Instruct (text, native: llama-cpp-python "
          f"{version('llama_cpp_python')}, chatml-function-calling for native; runtime: the app's "
          f"own llama.cpp runtime, guided: with the call grammar), 20 tasks, "
          f"max_tokens {max_tokens}, temperature 0")
    print(f"{'mode':<15} {'valid call':>14} {'as asked':>8} {'no call':>9} {'unreadable/invalid':>19} "
          f"{'run failed':>10} {'via native':>10} {'via XML':>8} {'seconds':>8}")
    for r in rows:
        print(f"{r['name']:<15} {pct(r['valid']):>14} {r['as_asked']:>8} {r['no_call']:>9} {r['invalid']:>19} "
              f"{r['failed']:>10} {r['via_native']:>10} {r['via_xml']:>8} {r['seconds']:>8.0f}")
    print("valid call: a call of an agent tool with its required parameters and no others; as asked:"
          " that call is the tool the task asks for, with the id it names")
    if any(r["name"] == "native+auto*" for r in rows):
        print("* through a proxy adding tool_choice \"auto\" and stream false: llama-cpp-python's "
              "chatml-function-calling ignores `tools` without a tool_choice and refuses "
              "tool_choice \"auto\" when streaming, and the engine streams with no tool_choice.")
    for r in rows:
        for n, what in r["examples"]:
            print(f"  {r['name']} task {n}: {what}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
