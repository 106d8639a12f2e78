"""Call markers that are control tokens reach the answer's text (issue 45).

Several families write their call markers as control tokens of their vocabulary: Llama 3's
`<|python_tag|>`, LFM2's `<|tool_call_start|>`, Mistral's `[TOOL_CALLS]`… llama.cpp renders a
control token as nothing unless asked, so the runtime asks for the text of exactly those tokens
(the markers listed in crates/parser/src/family.rs) and of no other control token.

SmolLM2-135M has no such marker, so the test writes a copy of its GGUF file (the gguf package's
reader and writer, every tensor as it was) whose last token, `ectable`, a rare one, becomes
`<|python_tag|>` of type CONTROL, as in Llama 3's vocabulary. A grammar on from the start names
that token (GBNF's `<|python_tag|>` is the token itself, not its characters), so the model must
write it; the answer's text must then start with the marker, where the engine's reader and the
runtime's triggers look for it.
"""

import json
import os
import subprocess
import urllib.request
from pathlib import Path

import gguf
import pytest
from gguf.scripts.gguf_new_metadata import MetadataDetails, copy_with_new_metadata

from shared import runtime_env, runtime_headers, runtime_key

RUN_TIMEOUT_S = 180
MARKER = "<|python_tag|>"
CALL = '{"name": "a", "parameters": {}}'


@pytest.fixture(scope="module")
def marker_model(cli, tmp_path_factory) -> Path:
    """SmolLM2-135M with its last token turned into the control token `<|python_tag|>`."""
    source = gguf.GGUFReader(os.environ["SMALL_MODEL_GGUF"])
    tokens = list(source.fields[gguf.Keys.Tokenizer.LIST].contents())
    types = list(source.fields[gguf.Keys.Tokenizer.TOKEN_TYPE].contents())
    assert MARKER not in tokens
    rare = len(tokens) - 1
    tokens[rare] = MARKER
    types[rare] = gguf.TokenType.CONTROL
    path = tmp_path_factory.mktemp("markers") / "smollm2-python-tag.gguf"
    arch = source.fields[gguf.Keys.General.ARCHITECTURE].contents()
    writer = gguf.GGUFWriter(path, arch=arch, endianess=source.endianess)
    copy_with_new_metadata(source, writer, {
        gguf.Keys.Tokenizer.LIST: MetadataDetails(gguf.GGUFValueType.ARRAY, tokens, sub_type=gguf.GGUFValueType.STRING),
        gguf.Keys.Tokenizer.TOKEN_TYPE: MetadataDetails(gguf.GGUFValueType.ARRAY, types, sub_type=gguf.GGUFValueType.INT32),
    }, [])
    return path


@pytest.fixture(scope="module")
def runtime(cli, marker_model):
    """The app's runtime on the marker model: (port, key)."""
    binary = os.environ.get("ARTIFACTFLOW_RUNTIME") or str(Path(cli).parent / "artifactflow-runtime")
    key = runtime_key()
    proc = subprocess.Popen(
        [binary, "--model", str(marker_model), "--ctx", "1024"],
        stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True,
        env=runtime_env(key),
    )
    try:
        ready = json.loads(proc.stdout.readline() or "{}")
        assert ready.get("ready"), ready
        yield ready["port"], key
    finally:
        proc.stdin.close()
        proc.wait(30)


def answer_text(runtime, grammar: str) -> str:
    port, key = runtime
    body = json.dumps({
        "messages": [{"role": "user", "content": "Call the tool a."}],
        "max_tokens": 40, "temperature": 0, "stream": False, "grammar": grammar,
    }).encode()
    request = urllib.request.Request(f"http://127.0.0.1:{port}/v1/chat/completions", data=body,
                                      headers=runtime_headers(key))
    with urllib.request.urlopen(request, timeout=RUN_TIMEOUT_S) as answer:
        return json.load(answer)["choices"][0]["message"]["content"]


def test_a_call_marker_that_is_a_control_token_is_in_the_answers_text(runtime):
    grammar = f"root ::= {MARKER} {json.dumps(CALL)}"
    text = answer_text(runtime, grammar)
    assert text == MARKER + CALL, text


def test_other_control_tokens_stay_out_of_the_text(runtime):
    # `<repo_name>` is one of SmolLM2's own control tokens, not a call marker: hidden as before.
    text = answer_text(runtime, 'root ::= <repo_name> "x"')
    assert text == "x", text
