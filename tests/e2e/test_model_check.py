"""The tool-use check in the real app, on a real model: SmolLM2-135M in the home's models folder,
the Models screen's "Check tool use" in a chosen mode (native, guided) shows its progress, then
the stored score as a badge; a local profile of that model with `tool_calls: auto` then says in
the profile form that the check chose that mode and guidance.

The app asks the six items of fixtures/check-items.jsonl instead of the 203 built-in ones (the
e2e-seams build's ARTIFACTFLOW_TEST_CHECK_ITEMS, src-tauri/src/seams.rs): seconds instead of an
hour on SmolLM2 (about 25 s on 2 idle cores). The badge's number is not written here: it is what the check stored in the
app's database.

Needs the model file that scripts/small_model.sh installs (or SMALL_MODEL_GGUF) and the runtime
binary beside the app (target/debug/artifactflow-runtime, which that script builds)."""

from __future__ import annotations

import json
import shutil
import sqlite3
import subprocess
from pathlib import Path

from selenium.webdriver.common.by import By

from harness import APP_BINARY, CLI_BINARY, ROOT, App
from test_first_run_local import small_model

ITEMS = ROOT / "tests/e2e/fixtures/check-items.jsonl"


def item_count() -> int:
    return sum(1 for line in ITEMS.read_text().splitlines() if line.strip() and not line.startswith("#"))


def percent(n: int, of: int) -> str:
    """As the badge rounds a share (JavaScript's Math.round)."""
    return f"{int(n * 100 / of + 0.5)} %"


def stored_checks(home: Path) -> list[dict]:
    """The tool-use checks the app kept, read from its database file."""
    db = sqlite3.connect(f"file:{home / 'data' / 'artifactflow.db'}?mode=ro", uri=True)
    try:
        db.row_factory = sqlite3.Row
        return [dict(r) for r in db.execute("SELECT * FROM tool_checks ORDER BY id")]
    finally:
        db.close()


def text_of(app: App, selector: str) -> str:
    return app.js("const e = document.querySelector(arguments[0]); return e ? e.textContent : ''", selector)


def tool_mode_line(app: App) -> str:
    """Open the default profile's form in Settings and return, once it has come, the line under
    Tool calls saying what auto chose."""
    app.by_testid("nav-settings").click()
    app.wait(lambda d: app.heading() == "Settings", "the Settings screen")
    app.by_testid("profile-default").find_element(By.XPATH, ".//button[@aria-label='Edit default']").click()
    # "Auto: looking at this model…" while the backend is asked.
    return app.wait(
        lambda d: (line := text_of(app, "[data-testid=tool-mode-line]").strip()) and "looking at" not in line and line,
        "the line saying what tool_calls: auto chose",
        timeout=60,
    )


def close_profile_form(app: App) -> None:
    app.by_testid("profile-default").find_element(By.XPATH, ".//form//button[normalize-space()='Cancel']").click()
    app.wait(lambda d: not app.js("return !!document.querySelector('[data-testid=tool-calls-field]')"),
             "the profile form to close")


def test_check_tool_use_shows_a_badge_and_auto_follows_it(home: Path):
    gguf = small_model()
    runtime = APP_BINARY.parent / "artifactflow-runtime"
    assert runtime.is_file(), f"{runtime} is missing: cargo build -p artifactflow-runtime"
    # The home as a first run leaves it, the model in its models folder, and a local profile of
    # that model in auto mode.
    out = subprocess.run([str(CLI_BINARY), "--home", str(home), "status"], capture_output=True, text=True, timeout=60)
    assert out.returncode == 0, out.stderr
    models = home / "data" / "models"
    models.mkdir(parents=True, exist_ok=True)
    shutil.copyfile(gguf, models / gguf.name)
    name = gguf.name.removesuffix(".gguf")
    (home / "config" / "models.yaml").write_text(
        f"profiles:\n  - name: default\n    api: local\n    model: {name}\n    tool_calls: auto\n"
    )
    total = item_count()

    app = App(home, "model_check", {"ARTIFACTFLOW_TEST_CHECK_ITEMS": str(ITEMS)})
    try:
        # Before any check, auto goes by the model's template.
        before = tool_mode_line(app)
        assert before.startswith("Auto: ") and "no check has run yet" in before, before
        close_profile_form(app)

        app.by_testid("nav-models").click()
        app.wait(lambda d: app.heading() == "Models", "the Models screen")
        row = f"[data-testid='tool-check-{name}']"
        app.wait(lambda d: f"{total} items." in text_of(app, row), f"the check's action saying {total} items")
        assert "Tool use not checked yet" in text_of(app, row), text_of(app, row)
        assert not app.js(f"return !!document.querySelector(\"{row} .badge-tools\")")

        # Every progress line the row shows, recorded as it comes (a poll could miss the short ones).
        app.js(
            "const row = document.querySelector(arguments[0]);"
            "window.__checkLines = [];"
            "const note = () => row.querySelectorAll('[role=status]').forEach(s => {"
            "  if (window.__checkLines.at(-1) !== s.textContent) window.__checkLines.push(s.textContent); });"
            "new MutationObserver(note).observe(row, {subtree: true, childList: true, characterData: true});",
            row,
        )
        how = app.driver.find_element(By.CSS_SELECTOR, f"{row} select")
        app.set_value(how, "native_guided")
        app.wait(lambda d: how.get_attribute("value") == "native_guided", "native, guided to be chosen")
        app.driver.find_element(By.XPATH, f"//button[@aria-label='Check tool use of {name}']").click()

        app.wait(lambda d: app.js(f"return !!document.querySelector(\"{row} progress\")"),
                 "the check's progress bar", timeout=60)
        app.screenshot("checking")
        # About 25 s on 2 idle cores; minutes when other model runtimes share them.
        app.wait(lambda d: app.js(f"return !!document.querySelector(\"{row} .badge-tools\")"),
                 "the check to end with a badge", timeout=900)
        lines = app.js("return window.__checkLines")
        assert f"Loading the model and asking the first of {total} items (native, guided)…" in lines, lines
        assert any(line.startswith(f"Item 1 of {total}") for line in lines), lines
        assert lines[-1] == f"Checked {total} items.", lines

        # The badge says what the check stored.
        checks = stored_checks(home)
        assert len(checks) == 1, checks
        kept = checks[0]
        assert (kept["mode"], kept["guided"], kept["items"]) == ("native", 1, total), kept
        assert kept["item_set"].startswith(f"{ITEMS.name} ("), kept["item_set"]
        badge = app.driver.find_element(By.CSS_SELECTOR, f"{row} .badge-tools")
        assert badge.text.strip() == f"Tools {percent(kept['as_asked'], kept['items'])} · native, guided", badge.text
        by_kind = json.loads(kept["report"])["by_kind"]
        tooltip = badge.get_attribute("title").splitlines()
        assert [line.split(": ", 1)[1] for line in tooltip] == [
            f"{k['as_asked']} of {k['items']} ({percent(k['as_asked'], k['items'])})" for k in by_kind
        ], (tooltip, by_kind)
        app.screenshot("checked")

        # The profile's auto now goes by that check.
        after = tool_mode_line(app)
        assert after == "Auto: native calls, guided — this model's tool-use check scored best this way", after
        app.screenshot("auto-line")
    finally:
        app.stop()
