"""A realistic local model's calls, read as it writes them: Qwen2.5-Coder-0.5B-Instruct (Q4_K_M,
from the six PyPI wheels scripts/small_model.sh puts together) on the app's own runtime, driven
through `artifactflow-cli run` with the one-line role prompt.

Asked to save a note with the tools offered natively, this model answers with a JSON call object
in a Markdown code fence, not in the `<tool_call>` tags its template describes. The engine reads
that form (crates/parser/FORMS.md) and the call runs: the note is in the library afterwards.
"""

import json
import os
import shutil
import sqlite3
import subprocess
from pathlib import Path

import pytest

RUN_TIMEOUT_S = 300

ROLE_PROMPT = (
    "You are a notes assistant. You keep the user's notes as artifacts. "
    "Use the tools to do what the user asks."
)
TASK = "Save a note with id groceries titled Groceries: eggs, milk."


def agent_file() -> str:
    return (
        "---\nname: notes\ndescription: \"Keeps notes\"\nmodel: qwen\ntools:\n"
        "  create_artifact: auto\n  read_artifact: auto\nmax_tool_rounds: 1\n---\n\n" + ROLE_PROMPT
    )


@pytest.fixture
def qwen_home(cli, tmp_path) -> Path:
    gguf = os.environ.get("QWEN_GGUF")
    assert gguf and Path(gguf).is_file(), "scripts/small_model.sh sets QWEN_GGUF"
    home = tmp_path / "home"
    subprocess.run([cli, "--home", str(home), "status"], capture_output=True, text=True,
                   timeout=60, check=True, stdin=subprocess.DEVNULL)
    models = home / "data" / "models"
    models.mkdir(parents=True, exist_ok=True)
    # A link, not a copy: the file is 470 MB.
    os.symlink(gguf, models / "qwen2.5-coder-0.5b.gguf")
    (home / "config" / "agents" / "notes.md").write_text(agent_file())
    return home


def database_of(cli: str, home: Path) -> str:
    status = subprocess.run([cli, "--home", str(home), "status", "--json"], capture_output=True,
                            text=True, timeout=60, check=True, stdin=subprocess.DEVNULL)
    return json.loads(status.stdout)["database"]


def first_answer(database: str, conversation: str) -> tuple[str, list[tuple[str, dict, str]]]:
    """The conversation's first answer: its text and its calls (tool, params, status)."""
    db = sqlite3.connect(f"file:{database}?mode=ro", uri=True)
    try:
        row = db.execute(
            "SELECT id, content FROM messages WHERE conversation_id = ? AND role = 'assistant'"
            " AND depth = 0 ORDER BY id LIMIT 1", (conversation,)).fetchone()
        assert row, f"no answer in {conversation}"
        calls = [(tool, json.loads(params), status) for tool, params, status in db.execute(
            "SELECT tool, params, status FROM tool_calls WHERE message_id = ? ORDER BY position",
            (row[0],))]
        return row[1], calls
    finally:
        db.close()


def artifact_ids(database: str) -> set[str]:
    db = sqlite3.connect(f"file:{database}?mode=ro", uri=True)
    try:
        return {r[0] for r in db.execute("SELECT id FROM artifacts")}
    finally:
        db.close()


def run_task(cli: str, home: Path, conversation: str, profile: str) -> tuple[str, list]:
    (home / "config" / "models.yaml").write_text(
        "profiles:\n  - name: qwen\n    api: local\n    model: qwen2.5-coder-0.5b\n"
        "    max_tokens: 160\n    temperature: 0\n    context_window: 4096\n" + profile)
    out = subprocess.run(
        [cli, "--home", str(home), "run", "--agent", "notes", "--yes",
         "--conversation", conversation, TASK],
        capture_output=True, text=True, timeout=RUN_TIMEOUT_S, stdin=subprocess.DEVNULL)
    assert "panicked" not in out.stderr, out.stderr
    text, calls = first_answer(database_of(cli, home), conversation)
    print(f"{conversation}: answer {text!r}\ncalls {calls}")
    return text, calls


def test_qwens_fenced_json_call_is_read(cli, qwen_home):
    """Unguided, the model writes the call in a code fence, with the right tool and id but
    parameters of the other tool added (greedy, the same every run); the call is read, named
    and recorded (and refused for those parameters, with the schema), never dropped."""
    text, calls = run_task(cli, qwen_home, "unguided", "    tool_calls: native\n    guided_calls: off\n")
    assert text.lstrip().startswith("```"), text
    assert len(calls) == 1, (text, calls)
    tool, params, status = calls[0]
    assert tool == "create_artifact", (text, calls)
    assert params["id"] == "groceries", (text, calls)


def test_qwens_guided_fenced_call_is_valid_and_runs(cli, qwen_home):
    """Guided, the grammar takes over at the fence's JSON opening and keeps the call to the
    tool's schema: the call runs and the note is in the library."""
    text, calls = run_task(cli, qwen_home, "guided", "    tool_calls: native\n    guided_calls: on\n")
    assert len(calls) == 1, (text, calls)
    tool, params, status = calls[0]
    assert (tool, status) == ("create_artifact", "succeeded"), (text, calls)
    assert params["id"] == "groceries", (text, calls)
    assert "groceries" in artifact_ids(database_of(cli, qwen_home)), (text, calls)
