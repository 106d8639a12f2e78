"""Benchmark, not a test (pytest collects test_*.py only): text vs native vs guided tool calls
with the real small model of scripts/small_model.sh (SmolLM2-135M-Instruct through
llama-cpp-python, and through the app's own runtime).

The same 40 small tasks run through `artifactflow-cli run`, one conversation per task: 12 "save a
note with id X, title T, saying …", 8 "read the artifact with id X", 6 saves with a content
type (one of create_artifact's allowed values), 6 "read version N of X" (a whole number), 4
questions that need no tool, 2 tasks that save two notes (two tool rounds: a guided answer holds
one call) and 2 saves of a long text. Rows (BENCH_ROWS picks some, comma-separated: text,
native, runtime-text, runtime-guided, runtime-native, runtime-native-guided, proxy):

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

- runtime text:   `tool_calls: text`, `guided_calls: off` against the app's own llama.cpp
           runtime (`artifactflow-runtime`, started here and kept for the row like the
           server above: the engine speaks to it as it does for `api: local`).
- runtime guided: the same with `guided_calls: on`: the request carries the grammar of the
           agent's calls, which the runtime's sampler follows from `<tool_call>` on.
- runtime native (rt native): `tool_calls: native`, `guided_calls: off` against the same
           runtime: the tools go in the request, the runtime offers them in the Hermes form
           (SmolLM2's template takes no tools) and returns the model's `<tool_call>` JSON as
           native calls.
- runtime native guided (rt native+guid): the same with `guided_calls: on`: the request
           carries the grammar of native calls (`tools grammar --native`).

With BENCH_PROMPT=fewshot the native rows get the examples written as native calls (JSON in
`<tool_call>`, shared.py's NATIVE_ROLE_PROMPT), the text rows as XML calls.

For each task it looks at the first assistant answer (depth 0; for a two-note task every answer
of the run) and its `tool_calls` rows. The answer "yields a valid call" when a row names a tool
the agent has (create_artifact, read_artifact) with every required parameter as non-empty text
(create_artifact: id, title, content; read_artifact: id), no parameter the tool does not have,
and typed ones of their type (content_type one of the allowed values; version, offset, limit
whole numbers). "As asked": the task got what it asks for: the tool with the id (and the
content type, version or end of the long text) it names, both notes, or no call at all when
no tool is needed (a grammar can force the shape of a call, not its sense).

"Placeholder-like": calls (of every judged answer, valid or not) with an argument value that
looks like a placeholder: it matches /your_|_here|<.*>|placeholder|example_value/ (any case), or
it is, verbatim, the value the tool instructions' example gives that parameter (read from
`artifactflow-cli tools show`; a documented default does not count, the tool would use it
anyway), and in either case the task itself does not contain it (`<h1>Home</h1>` is asked for).
The report prints the count per row, how many of those calls copied a placeholder or an
example value (every match but `<…>` alone, which is mostly markup the model ran on into, such
as `</title>` inside a value), and the first few such values. BENCH_DUMP=FILE writes every
judged call of every row there (JSON lines: row, task, tool, params, valid, placeholder-like
values).

Exits 0 whatever the model does; 2 when the harness breaks (a server does not start, the CLI
panics or exits with an unexpected code, a run hangs past its timeout).

Environment (set by scripts/small_model.sh): ARTIFACTFLOW_CLI, SMALL_MODEL_GGUF,
SMALL_MODEL_BASE_URL (the running default server; one is started when unset),
SMALL_MODEL_THREADS (default 1). BENCH_ROWS (default every row but the proxy), BENCH_PROMPT
(plain, the default: a one-line role prompt; fewshot: the small-model tests' prompt with XML
examples), BENCH_TASKS (all, the default, or half: every second task, which keeps every kind of
task: 10 one-call, 3 allowed-value, 3 number, 2 no-tool, 1 two-note, 1 long-text; the test
command runs half to stay inside its time), BENCH_MAX_TOKENS (default 192), BENCH_PROXY=1 to add the proxy row (6-9 more minutes
on a busy 2-core machine: chatml-function-calling ignores max_tokens there), BENCH_KEEP=1 to
keep the homes and server logs.
"""

import http.server
import json
import os
import re
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
from importlib.metadata import PackageNotFoundError, version
from pathlib import Path

from shared import runtime_env, runtime_key

AGENT = "notes"
AGENT_TWO = "notes-two-rounds"
ROLE_PROMPT = (
    "You are a notes assistant. You keep the user's notes as artifacts. "
    "Use the tools to do what the user asks."
)


# Every row; BENCH_ROWS picks some (scripts/small_model.sh runs the built-in runtime's two).
ROWS = ["text", "native", "runtime-text", "runtime-guided", "runtime-native", "runtime-native-guided"]


def role_prompt(native: bool) -> str:
    """The plain role prompt, or with BENCH_PROMPT=fewshot the small-model tests' prompt with
    examples (shared.py): XML calls, or for native rows the same calls as native ones."""
    if os.environ.get("BENCH_PROMPT", "plain") == "fewshot":
        from shared import NATIVE_ROLE_PROMPT, ROLE_PROMPT as FEWSHOT

        return NATIVE_ROLE_PROMPT if native else FEWSHOT
    return ROLE_PROMPT
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
# id, title, content type (one of create_artifact's allowed values), text
TYPED = [
    ("prices", "Prices", "text/csv", "item,price / milk,1.20 / bread,2.50"),
    ("config", "Config", "application/json", '{"debug": true, "level": 3}'),
    ("hello", "Hello script", "text/x-python", 'print("hello")'),
    ("home", "Home page", "text/html", "<h1>Home</h1>"),
    ("plain", "Plain note", "text/plain", "Just a plain line of text."),
    ("flow", "Flow chart", "text/x-mermaid", "graph TD; A-->B"),
]
# id, version (a whole number)
VERSIONS = [("dentist", 2), ("budget", 3), ("todo", 1), ("recipe", 4), ("travel", 2), ("notes", 5)]
NO_TOOL = [
    "What is the capital of France?",
    "What is two plus two?",
    "Say hello in Spanish.",
    "What colour is the sky on a clear day?",
]
# Two notes in one task: (id, title, text) twice.
PAIRS = [
    (("milk", "Milk", "Buy milk."), ("bread", "Bread", "Buy bread.")),
    (("keys", "Keys", "The keys are in the drawer."), ("bike", "Bike", "The bike is in the shed.")),
]
# A long value: (id, title, text, a phrase from its end that must arrive).
LONG = [
    ("trip", "Trip plan",
     "Day one: take the early train to Lyon, check in at the hotel near the station, walk along "
     "the river in the afternoon and have dinner in the old town. Day two: visit the museum in "
     "the morning, take the cable car up the hill, buy cheese at the covered market and pack for "
     "the evening train back home, which leaves at 19:40 from platform 7.",
     "platform 7"),
    ("garden", "Garden jobs",
     "In spring, sow the tomatoes indoors in March and plant them out after the last frost. Cut "
     "back the lavender, feed the roses and mulch the beds. In summer, water early in the "
     "morning, tie up the beans, pick the courgettes while they are small and keep the pond "
     "topped up. In autumn, plant the tulip bulbs before the first cold night in November.",
     "first cold night"),
]


def first(calls: list[dict], tool: str) -> dict | None:
    return next((c["params"] for c in calls if c["tool"] == tool and c["valid"]), None)


# (task, kind, what it asks: a check of the valid calls of the run's judged answers)
TASKS = (
    [(f'Save a note with id "{i}", title "{t}", saying: {x}', "one",
      lambda c, i=i: (first(c, "create_artifact") or {}).get("id") == i) for i, t, x in SAVES]
    + [(f'Read the artifact with id "{i}".', "one",
        lambda c, i=i: (first(c, "read_artifact") or {}).get("id") == i) for i in READS]
    + [(f'Save an artifact with id "{i}", title "{t}" and content type {ct}, containing: {x}', "enum",
        lambda c, i=i, ct=ct: (first(c, "create_artifact") or {}).get("id") == i
        and (first(c, "create_artifact") or {}).get("content_type") == ct) for i, t, ct, x in TYPED]
    + [(f'Read version {v} of the artifact with id "{i}".', "number",
        lambda c, i=i, v=v: (first(c, "read_artifact") or {}).get("id") == i
        and str((first(c, "read_artifact") or {}).get("version", "")).strip() == str(v))
       for i, v in VERSIONS]
    + [(q, "none", lambda c: not c) for q in NO_TOOL]
    + [(f'Save two notes. One with id "{a[0]}", title "{a[1]}", saying: {a[2]} '
        f'The other with id "{b[0]}", title "{b[1]}", saying: {b[2]}', "two",
        lambda c, a=a, b=b: {a[0], b[0]} <= {x["params"].get("id") for x in c
                                              if x["tool"] == "create_artifact" and x["valid"]})
       for a, b in PAIRS]
    + [(f'Save a note with id "{i}", title "{t}", saying: {x}', "long",
        lambda c, i=i, end=end: (first(c, "create_artifact") or {}).get("id") == i
        and end in (first(c, "create_artifact") or {}).get("content", ""))
       for i, t, x, end in LONG]
)
assert len(TASKS) == 40


def chosen_tasks() -> list[tuple[int, tuple]]:
    """The tasks to run with their numbers in TASKS (conversation ids and examples keep them)."""
    which = os.environ.get("BENCH_TASKS", "all")
    if which not in ("all", "half"):
        raise HarnessError(f"unknown BENCH_TASKS {which!r}; known: all, half")
    return [(n, t) for n, t in enumerate(TASKS) if which == "all" or n % 2 == 0]
KINDS = {"one": "one call", "enum": "an allowed value", "number": "a number", "none": "no tool needed",
         "two": "two calls", "long": "a long text"}

TOOLS = {  # name: (required, allowed)
    "create_artifact": ({"id", "title", "content"}, {"id", "title", "content", "content_type"}),
    "read_artifact": ({"id"}, {"id", "version", "offset", "limit"}),
}

# What a value copied from a template or an instruction example looks like.
PLACEHOLDER = re.compile(r"your_|_here|<.*>|placeholder|example_value", re.IGNORECASE | re.DOTALL)
# The same without markup: a placeholder word written out.
PLACEHOLDER_WORD = re.compile(r"your_|_here|placeholder|example_value", re.IGNORECASE)
EXAMPLE_VALUE = re.compile(r"<(\w+)><!\[CDATA\[(.*?)\]\]></\1>", re.DOTALL)
PARAM_LINE = re.compile(r"^\s+- (\w+): \w+ \((?:required|optional)\)(.*)$", re.MULTILINE)

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


def start_runtime(cli: str, gguf: str):
    """The app's runtime (beside the CLI, or ARTIFACTFLOW_RUNTIME) serving `gguf`, kept running
    for a whole row as llama-cpp-python's server is, so both keep the shared system prompt
    cached between tasks (a profile with `api: local` starts one per CLI process)."""
    binary = os.environ.get("ARTIFACTFLOW_RUNTIME") or str(Path(cli).parent / "artifactflow-runtime")
    key = runtime_key()
    proc = subprocess.Popen(
        [binary, "--model", gguf, "--ctx", "4096", "--threads", os.environ.get("SMALL_MODEL_THREADS", "1")],
        stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True,
        env=runtime_env(key))
    try:
        ready = json.loads(proc.stdout.readline() or "{}")
    except ValueError:
        ready = {}
    if not ready.get("ready"):
        stop(proc)
        raise HarnessError(f"the runtime did not start: {ready}")
    return proc, f"http://127.0.0.1:{ready['port']}/v1", key


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


def instruction_examples(cli: str, home: Path) -> dict[tuple[str, str], str]:
    """(tool, parameter) → the value the tool instructions' example gives it, for the agent's
    tools, as `tools show` prints the block the model sees; a parameter whose example is its
    documented default is left out (giving the default is not copying a made-up value)."""
    examples = {}
    for tool in TOOLS:
        out = cli_run(cli, ["--home", str(home), "tools", "show", tool], 60)
        if out.returncode != 0:
            raise HarnessError(f"tools show {tool} failed:\n{out.stdout}{out.stderr}")
        call = out.stdout[out.stdout.find("<tool_call>"):]
        defaults = {name: notes.split("Default: ", 1)[1].strip()
                    for name, notes in PARAM_LINE.findall(out.stdout) if "Default: " in notes}
        for name, value in EXAMPLE_VALUE.findall(call):
            if defaults.get(name) != value:
                examples[(tool, name)] = value
    return examples


def placeholder_values(call: dict, task: str,
                       examples: dict[tuple[str, str], str]) -> list[tuple[str, bool]]:
    """The argument values of `call` that look like placeholders (see the module doc), each
    shown as `name='value'` and whether it was copied (a placeholder word or the example's
    value, not only markup)."""
    found = []
    for name, value in call["params"].items():
        text = value if isinstance(value, str) else json.dumps(value)
        if not text.strip() or text.strip() in task:
            continue
        copied = bool(PLACEHOLDER_WORD.search(text)) or examples.get((call["tool"], name)) == text
        if copied or PLACEHOLDER.search(text):
            found.append((f"{name}={text[:40]!r}", copied))
    return found


def make_home(cli: str, root: Path, name: str, base_url: str, mode: str, max_tokens: int,
              key: str | None = None) -> tuple[Path, str]:
    """A home whose `smol` profile reaches the model at `base_url` in `mode` (`text`,
    `text+guided` or `native`), sending `key` (the runtime's) when given."""
    home = root / f"home-{name.replace('+', '-').replace(' ', '-')}"
    home.mkdir()
    out = cli_run(cli, ["--home", str(home), "status", "--json"], 60)
    if out.returncode != 0:
        raise HarnessError(f"status failed: {out.stderr}")
    status = json.loads(out.stdout)
    config = Path(status["config_dir"])
    where = f'    api: openai\n    base_url: "{base_url}"\n    model: smollm2\n'
    if key:
        # The profile names the secret; the config's .env holds it.
        where += '    api_key: "{{RUNTIME_KEY}}"\n'
        (config / ".env").write_text(f"RUNTIME_KEY={key}\n")
    if mode in ("text", "text+guided", "native+guided"):
        where += f"    guided_calls: {'on' if mode.endswith('+guided') else 'off'}\n"
        mode = mode.split("+")[0]
    native = mode == "native"
    (config / "models.yaml").write_text(
        "profiles:\n"
        "  - name: smol\n"
        f"{where}"
        f"    max_tokens: {max_tokens}\n"
        "    temperature: 0\n"
        "    timeout: 120\n"
        f"    tool_calls: {mode}\n"
    )
    # One agent per number of tool rounds: one for single-call tasks, two for two-call tasks
    # (a guided answer holds one call).
    for agent, rounds in ((AGENT, 1), (AGENT_TWO, 2)):
        (config / "agents" / f"{agent}.md").write_text(
            "---\n"
            f"name: {agent}\n"
            'description: "A notes assistant for the tool-call benchmark"\n'
            "model: smol\n"
            "tools:\n"
            "  create_artifact: auto\n"
            "  read_artifact: auto\n"
            f"max_tool_rounds: {rounds}\n"
            "---\n\n"
            f"{role_prompt(native)}\n"
        )
    check = cli_run(cli, ["--home", str(home), "check"], 60)
    if check.returncode != 0:
        raise HarnessError(f"check failed:\n{check.stdout}{check.stderr}")
    return home, status["database"]


CONTENT_TYPES = {"text/markdown", "text/plain", "text/html", "text/csv", "application/json",
                 "application/yaml", "text/x-python", "text/javascript", "text/x-rust",
                 "image/svg+xml", "text/x-mermaid"}


def valid(tool: str, params_json: str) -> bool:
    """A call of an agent tool with its required parameters as non-empty text, no others, and
    the typed ones of their type (a whole number; one of the allowed content types)."""
    if tool not in TOOLS:
        return False
    try:
        params = json.loads(params_json)
    except ValueError:
        return False
    if not isinstance(params, dict):
        return False
    required, allowed = TOOLS[tool]
    if not set(params) <= allowed or not all(
            isinstance(params.get(p), str) and params[p].strip() for p in required):
        return False
    if "content_type" in params and params["content_type"] not in CONTENT_TYPES:
        return False
    for number in ("version", "offset", "limit"):
        if number in params and not (isinstance(params[number], int)
                                     or str(params[number]).strip().lstrip("-").isdigit()):
            return False
    return True


def run_mode(cli: str, work: Path, name: str, base_url: str, mode: str, max_tokens: int,
             tasks: list[tuple[int, tuple]], key: str | None = None) -> dict:
    home, database = make_home(cli, work, name, base_url, mode, max_tokens, key)
    examples = instruction_examples(cli, home)
    row = dict(name=name, valid=0, as_asked=0, no_call=0, invalid=0, failed=0, via_native=0, via_xml=0,
               placeholder_calls=0, copied_calls=0, placeholder_values=[], calls=0, dump=[],
               seconds=0.0, examples=[], kinds={k: [0, 0] for k in KINDS})
    started = time.monotonic()
    for n, (task, kind, asked) in tasks:
        conversation = f"bench-{n:02d}"
        agent = AGENT_TWO if kind == "two" else AGENT
        out = cli_run(cli, ["--home", str(home), "run", "--agent", agent, "--yes",
                            "--conversation", conversation, task], RUN_TIMEOUT_S)
        db = sqlite3.connect(f"file:{database}?mode=ro", uri=True)
        try:
            # The first answer; for a two-call task every answer of the run.
            answers = db.execute(
                "SELECT id, content FROM messages WHERE conversation_id = ? AND role = 'assistant'"
                " AND depth = 0 ORDER BY id", (conversation,)).fetchall()
            answers = answers if kind == "two" else answers[:1]
            # Calls past the agent's tool rounds are recorded as not run; they do no part of the
            # task, so a two-note task counts only the rounds it was given.
            rows = [c for a in answers for c in db.execute(
                "SELECT tool, params, provider_call_id FROM tool_calls WHERE message_id = ?"
                " AND NOT (status = 'not_run' AND reason LIKE '%max_tool_rounds%')"
                " ORDER BY position", (a[0],)).fetchall()]
        finally:
            db.close()
        row["kinds"][kind][1] += 1
        if not answers:
            row["failed"] += 1
            row["examples"].append((n, "run failed: " + (out.stderr.strip().splitlines() or [""])[-1]))
            continue
        calls = []
        for tool, params, provider_id in rows:
            try:
                parsed = json.loads(params)
            except ValueError:
                parsed = {}
            calls.append(dict(tool=tool, params=parsed if isinstance(parsed, dict) else {},
                              valid=valid(tool, params), native=provider_id is not None))
        row["calls"] += len(calls)
        for c in calls:
            found = placeholder_values(c, task, examples)
            row["dump"].append(dict(row=name, task=n, tool=c["tool"], params=c["params"],
                                    valid=c["valid"], placeholder_like=[v for v, _ in found]))
            if found:
                row["placeholder_calls"] += 1
                row["copied_calls"] += any(copied for _, copied in found)
                row["placeholder_values"].append(
                    f"task {n} {c['tool']}: {', '.join(v for v, _ in found)}")
        good = [c for c in calls if c["valid"]]
        if good:
            row["valid"] += 1
        elif calls:
            row["invalid"] += 1
        else:
            row["no_call"] += 1
        if asked(calls if kind == "none" else good):
            row["as_asked"] += 1
            row["kinds"][kind][0] += 1
        for c in good:
            row["via_native" if c["native"] else "via_xml"] += 1
        if len(row["examples"]) < 3 and calls and not good:
            row["examples"].append((n, (answers[0][1] or "").strip().replace("\n", " ")[:160]
                                    + f"  calls: {[(c['tool'], str(c['params'])[:80]) for c in calls]}"))
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
    tasks = []
    try:
        tasks = chosen_tasks()
        wanted = [r.strip() for r in os.environ.get("BENCH_ROWS", ",".join(ROWS)).split(",") if r.strip()]
        if os.environ.get("BENCH_PROXY", "0") == "1" and "proxy" not in wanted:
            wanted.append("proxy")
        unknown = [r for r in wanted if r not in ROWS + ["proxy"]]
        if unknown:
            raise HarnessError(f"unknown BENCH_ROWS {unknown}; known: {', '.join(ROWS + ['proxy'])}")
        text_url = native_url = runtime_url = runtime_key_ = None
        if "text" in wanted:
            text_url = os.environ.get("SMALL_MODEL_BASE_URL")
            if not text_url:
                proc, text_url = start_server(gguf, work, "text", None)
                servers.append(proc)
        if "native" in wanted or "proxy" in wanted:
            proc, native_url = start_server(gguf, work, "native", "chatml-function-calling")
            servers.append(proc)
        plan = []
        for row in wanted:
            if row == "text":
                plan.append(("text", text_url, "text"))
            elif row == "native":
                plan.append(("native", native_url, "native"))
            elif row.startswith("runtime-"):
                if runtime_url is None:
                    proc, runtime_url, runtime_key_ = start_runtime(cli, gguf)
                    servers.append(proc)
                plan.append({
                    "runtime-text": ("runtime text", runtime_url, "text"),
                    "runtime-guided": ("runtime guided", runtime_url, "text+guided"),
                    "runtime-native": ("rt native", runtime_url, "native"),
                    "runtime-native-guided": ("rt native+guid", runtime_url, "native+guided"),
                }[row])
            elif row == "proxy":
                proxy, proxy_url = start_proxy(native_url)
                plan.append(("native+auto*", proxy_url, "native"))
        for name, url, mode in plan:
            print(f"  {name}: {len(tasks)} tasks …", flush=True)
            key = runtime_key_ if url == runtime_url else None
            rows.append(run_mode(cli, work, name, url, mode, max_tokens, tasks, key))
            r = rows[-1]
            print(f"  {name}: valid {r['valid']}, as asked {r['as_asked']}, no call {r['no_call']}, "
                  f"unreadable/invalid {r['invalid']}, failed {r['failed']}, "
                  f"placeholder-like {r['placeholder_calls']} of {r['calls']} calls "
                  f"({r['copied_calls']} copied), {r['seconds']:.0f} s",
                  flush=True)
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

    total = len(tasks)
    pct = lambda k: f"{k:>2}/{total} ({100 * k // total:>3}%)"  # noqa: E731
    print()
    try:
        server = f"llama-cpp-python {version('llama_cpp_python')}"
    except PackageNotFoundError:
        server = "llama-cpp-python (not installed here)"
    print(f"Tool-call format benchmark: SmolLM2-135M-Instruct (text, native: {server}, "
          f"chatml-function-calling for native; runtime: the app's "
          f"own llama.cpp runtime, guided: with the call grammar), {total} tasks, "
          f"{os.environ.get('BENCH_PROMPT', 'plain')} role prompt, max_tokens {max_tokens}, temperature 0")
    print(f"{'mode':<15} {'valid call':>14} {'as asked':>8} {'no call':>9} {'unreadable/invalid':>19} "
          f"{'run failed':>10} {'via native':>10} {'via XML':>8} {'placeholder-like':>16} {'copied':>6} "
          f"{'seconds':>8}")
    for r in rows:
        print(f"{r['name']:<15} {pct(r['valid']):>14} {r['as_asked']:>8} {r['no_call']:>9} {r['invalid']:>19} "
              f"{r['failed']:>10} {r['via_native']:>10} {r['via_xml']:>8} "
              f"{str(r['placeholder_calls']) + '/' + str(r['calls']) + ' calls':>16} {r['copied_calls']:>6} "
              f"{r['seconds']:>8.0f}")
    print("valid call: a call of an agent tool with its required parameters, no others, typed ones of"
          " their type; as asked: what the task asks (the tool, id and value it names; no call when"
          " no tool is needed; both notes of a two-note task)")
    print("as asked by kind of task: " + ", ".join(f"{KINDS[k]} ({c} tasks)" for k, c in
                                                   ((k, sum(1 for _, t in tasks if t[1] == k)) for k in KINDS)))
    for r in rows:
        print(f"  {r['name']:<15} " + "  ".join(f"{KINDS[k]} {a}/{n}" for k, (a, n) in r["kinds"].items()))
    if any(r["name"] == "native+auto*" for r in rows):
        print("* through a proxy adding tool_choice \"auto\" and stream false: llama-cpp-python's "
              "chatml-function-calling ignores `tools` without a tool_choice and refuses "
              "tool_choice \"auto\" when streaming, and the engine streams with no tool_choice.")
    print("placeholder-like: calls with a value matching /your_|_here|<.*>|placeholder|example_value/"
          " or equal to the instructions' example value for that parameter (not a default), the"
          " task not containing it; copied: those with a placeholder word or the example's value"
          " (not only markup)")
    if os.environ.get("BENCH_DUMP"):
        with open(os.environ["BENCH_DUMP"], "w") as dump:
            for r in rows:
                for call in r["dump"]:
                    dump.write(json.dumps(call) + "\n")
    for r in rows:
        for what in r["placeholder_values"][:5]:
            print(f"  {r['name']} placeholder-like: {what}")
    for r in rows:
        for n, what in r["examples"]:
            print(f"  {r['name']} task {n}: {what}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
