"""Agent runs against a real small model (SmolLM2-135M-Instruct through llama-cpp-python).

The model is far too small to do the tasks; it is here as a source of real, realistically broken
tool calls. So only properties are asserted, never text:
- every run ends (final answer, or the answer after the round limit) and the CLI exits cleanly:
  0 when the run completed, 1 with a one-line error when it failed — never a panic, never a hang;
- every call the engine could not read (`__malformed__` per `artifactflow-cli parse`) went back
  to the model as a failed `__malformed__` result saying it could not be read, in the tool
  message right after that answer — except where the engine by design runs no call of the
  answer: the round limit was hit, or the call was cut off by the token limit (then the model is
  told so instead).
"""

import json
import os
import re
import sqlite3
import subprocess
import time

import pytest

from shared import AGENT, OBSERVED

TASKS = {
    "save": "Use create_artifact to save a note with id dentist: the dentist appointment is on Friday at 3 pm.",
    "save_read": "Create an artifact with id groceries listing milk, eggs and bread, then read it back with read_artifact.",
    "read_missing": "Use read_artifact to read the artifact with id travel.",
    "question": "What is 12 plus 30?",
}

# A hang guard only: a run makes at most 5 model requests of at most 256 tokens each.
RUN_TIMEOUT_S = 240

RESULT = re.compile(r'<tool_result name="([^"]*)" success="(true|false)">\n<(?:data|error)>\n(.*?)\n</(?:data|error)>\n</tool_result>', re.S)
TOOL_CALL_TAG = re.compile(r"<tool_call\b", re.I)
# The engine's note when an agent has used up its tool rounds.
LIMIT_NOTE = "tool rounds allowed for this task"



def parse_all(cli: str, texts: list[str]) -> list[list[dict]]:
    """The engine's own reading of each answer, through `artifactflow-cli parse --jsonl`."""
    if not texts:
        return []
    lines = "".join(json.dumps({"input": t}) + "\n" for t in texts)
    out = subprocess.run(
        [cli, "parse", "--jsonl"], input=lines, capture_output=True, text=True, timeout=60
    )
    assert out.returncode == 0, out.stderr
    parsed = [json.loads(line)["tool_calls"] for line in out.stdout.splitlines() if line.strip()]
    assert len(parsed) == len(texts)
    return parsed


@pytest.mark.parametrize("name", list(TASKS))
def test_run_ends_cleanly_and_reports_every_unreadable_call(cli, home, name):
    conversation = f"smol-{name}"
    started = time.monotonic()
    try:
        out = subprocess.run(
            [cli, "--home", str(home), "run", "--agent", AGENT, "--yes",
             "--conversation", conversation, TASKS[name]],
            capture_output=True,
            text=True,
            timeout=RUN_TIMEOUT_S,
            stdin=subprocess.DEVNULL,
            env=dict(os.environ, RUST_BACKTRACE="1"),
        )
    except subprocess.TimeoutExpired as e:
        pytest.fail(f"the run did not end within {RUN_TIMEOUT_S} s:\n{e.stderr}")
    seconds = time.monotonic() - started
    both = out.stdout + out.stderr

    # The process ended cleanly.
    assert "panicked" not in both, both
    assert "stack backtrace" not in both.lower(), both
    assert out.returncode in (0, 1), f"exit {out.returncode}\n{both}"

    db = sqlite3.connect(f"file:{OBSERVED['database']}?mode=ro", uri=True)
    runs = db.execute(
        "SELECT id, status, error, ended_at FROM runs WHERE conversation_id = ?", (conversation,)
    ).fetchall()
    assert len(runs) == 1, runs
    run_id, status, error, ended_at = runs[0]
    assert ended_at is not None, "the run was never marked as ended"
    if out.returncode == 0:
        assert status == "completed", (status, error)
    else:
        # A failure is a clean one: recorded, and reported as one error line.
        assert status == "failed" and error, (status, error)
        assert out.stderr.strip().splitlines()[-1].startswith("error: "), out.stderr

    messages = db.execute(
        "SELECT role, content, depth FROM messages WHERE run_id = ? ORDER BY id", (run_id,)
    ).fetchall()
    db.close()
    assert messages and messages[0][0] == "user", messages
    assert all(depth == 0 for _, _, depth in messages), "no sub-agents in this agent"

    answers = [i for i, (role, _, _) in enumerate(messages) if role == "assistant"]
    parsed = dict(zip(answers, parse_all(cli, [messages[i][1] for i in answers])))
    seen = dict(name=name, seconds=round(seconds, 1), exit=out.returncode, answers=len(answers),
                well_formed=0, malformed=0, cut_off=0, not_run_final_round=0, tagless_blocks=0)
    problems = []
    round_limit_told = False
    for i in answers:
        text = messages[i][1]
        calls = parsed[i]
        malformed = sum(c["name"] == "__malformed__" for c in calls)
        seen["malformed"] += malformed
        seen["well_formed"] += len(calls) - malformed
        # `<tool_call>` blocks with no tag at all are prose by the parser's rule 3.
        seen["tagless_blocks"] += max(0, len(TOOL_CALL_TAG.findall(text)) - len(calls))
        following = messages[i + 1] if i + 1 < len(messages) else None

        if following is None:
            # The run's last answer: a final answer. Calls in it would have results after it.
            if calls:
                problems.append(f"answer {i} has {len(calls)} call(s) but nothing answered them")
            continue
        role, reply, _ = following
        if role != "tool":
            problems.append(f"answer {i} is followed by a {role} message, not tool results")
            continue
        if not calls:
            problems.append(f"answer {i} has no call but was answered by a tool message")
            continue
        results = RESULT.findall(reply)
        # Past the round limit (the answer the engine tells to finish, and the one after it)
        # the calls do not run: each still has a result saying so (an unreadable one says
        # it could not be read).
        past_limit = round_limit_told or LIMIT_NOTE in reply
        round_limit_told = past_limit
        if past_limit:
            seen["not_run_final_round"] += len(calls)
            for (result_name, _, body) in results:
                if result_name != "__malformed__" and not body.startswith("not run: "):
                    problems.append(f"answer {i}: a call past the round limit has the result {body!r}")
        names = [c["name"] for c in calls]
        got = [r[0] for r in results]
        if len(results) == len(calls) - 1:
            # The last call was cut off by the token limit: not run, and the model was told.
            seen["cut_off"] += 1
            if "cut off" not in reply:
                problems.append(f"answer {i}: a call was left out without a cut-off note")
            names = names[:-1]
        if got != names:
            problems.append(f"answer {i}: calls {names} but results {got}")
            continue
        for (result_name, success, body) in results:
            if result_name == "__malformed__":
                if success != "false" or "could not be read" not in body:
                    problems.append(f"answer {i}: a malformed call was not reported as unreadable: {body!r}")
        if "__malformed__" in got and "<tool_call>" not in reply.split("</tool_result>")[-1]:
            problems.append(f"answer {i}: no format reminder after an unreadable call")

    OBSERVED.setdefault("runs", []).append(
        dict(seen, ended_by=("error" if out.returncode else
                             "round limit" if round_limit_told else "final answer"))
    )
    assert not problems, "\n".join(problems) + "\n\n" + "\n---\n".join(
        f"[{r}] {c}" for r, c, _ in messages
    )
