"""Shared setup of the small-model tests: a temporary ArtifactFlow home whose only model profile
is the SmolLM2 server started by scripts/small_model.sh, and a summary of what the model did."""

import json
import os
import subprocess
from pathlib import Path

import pytest

from shared import AGENT, OBSERVED, ROLE_PROMPT

AGENT_FILE = f"""\
---
name: {AGENT}
description: "A notes assistant for the small-model tests"
model: smol
tools:
  create_artifact: auto
  read_artifact: auto
max_tool_rounds: 3
---

{ROLE_PROMPT}"""


def _models_yaml(base_url: str) -> str:
    return f"""\
profiles:
  - name: smol
    api: openai
    base_url: "{base_url}"
    model: smollm2
    max_tokens: 256
    temperature: 0.7
    timeout: 120
"""


@pytest.fixture(scope="session")
def cli() -> str:
    path = os.environ.get("ARTIFACTFLOW_CLI")
    if not path or not os.environ.get("SMALL_MODEL_BASE_URL"):
        pytest.skip("run through scripts/small_model.sh (it starts the model server)")
    assert Path(path).is_file(), f"no CLI binary at {path}"
    return path


@pytest.fixture(scope="session")
def home(cli, tmp_path_factory) -> Path:
    """A fresh home seeded by `status`, with the small model as its only profile."""
    home = tmp_path_factory.mktemp("home")
    out = subprocess.run(
        [cli, "--home", str(home), "status", "--json"],
        capture_output=True,
        text=True,
        timeout=60,
        stdin=subprocess.DEVNULL,
    )
    assert out.returncode == 0, out.stderr
    status = json.loads(out.stdout)
    config = Path(status["config_dir"])
    (config / "models.yaml").write_text(_models_yaml(os.environ["SMALL_MODEL_BASE_URL"]))
    (config / "agents" / f"{AGENT}.md").write_text(AGENT_FILE)
    check = subprocess.run(
        [cli, "--home", str(home), "check"],
        capture_output=True,
        text=True,
        timeout=60,
        stdin=subprocess.DEVNULL,
    )
    assert check.returncode == 0, check.stdout + check.stderr
    OBSERVED["database"] = status["database"]
    return home


def pytest_terminal_summary(terminalreporter):
    runs = OBSERVED.get("runs", [])
    if not runs:
        return
    write = terminalreporter.write_line
    write("")
    write("small model: what SmolLM2-135M did")
    keys = [
        "seconds",
        "exit",
        "ended_by",
        "answers",
        "well_formed",
        "malformed",
        "cut_off",
        "not_run_final_round",
        "tagless_blocks",
    ]
    write("  " + " ".join(f"{k:>10}" if k != "ended_by" else f"{k:>12}" for k in ["run"] + keys))
    for r in runs:
        cells = [f"{r['name']:>10}"] + [
            f"{r[k]:>12}" if k == "ended_by" else f"{r[k]:>10}" for k in keys
        ]
        write("  " + " ".join(cells))
