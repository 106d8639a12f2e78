"""Context management in the real app (issue 20): a run whose rounds outgrow a small window
ends with its answer; the composer's meter shows the model's share of the window, the
timeline marks where the model's view was shortened (the note behind "Show what the model
sees"), every full result stays on screen, and after a restart the stored note is marked
again and the meter shows the last request's share."""

from __future__ import annotations

from pathlib import Path

from selenium.webdriver.common.by import By

from harness import App, JsonServer, ScriptedModel, prepare_home

AGENT = """---
name: tester
description: Test agent
model: default
tools:
  page: auto
  read_artifact: auto
max_tool_rounds: 8
---
You are the tester.
"""

NOTE = "So far the tester has read pages 1 to 4 of the report; each page's artifact is listed."
ROUNDS = 6
# Each page's result is about 1,800 characters of JSON, each answer about 1,200 characters of
# prose: six rounds are several times what a 2,048-token window holds.
THOUGHT = "I keep reading the report carefully, page after page, noting each finding. " * 16


def page_call(n: int) -> str:
    return f"<tool_call><name>page</name><params><n>{n}</n></params></tool_call>"


def last_answer(app: App) -> str:
    answers = app.driver.find_elements(By.CSS_SELECTOR, '[data-testid="msg-assistant"]')
    return answers[-1].text if answers else ""


def markers(app: App) -> list[dict]:
    return app.js(
        "return [...document.querySelectorAll('[data-testid=context-marker]')]"
        ".map((m) => ({kind: m.dataset.kind, text: m.textContent}))"
    )


def test_a_long_run_through_a_small_window_is_marked_and_metered(home: Path, tmp_path: Path):
    pages = JsonServer(lambda path, base: {"page": path, "text": f"{path} " + "finding " * 220})
    turns = [{"text": f"{THOUGHT}\n{page_call(n)}"} for n in range(1, ROUNDS + 1)]
    turns.append({"text": "The report's **answer** is 42."})
    # The server refuses what a 2,048-token model could not read (4 characters a token).
    model = ScriptedModel(turns, tmp_path, char_limit=8192, condensation_note=NOTE)
    prepare_home(home, model, AGENT)
    models = home / "config" / "models.yaml"
    models.write_text(models.read_text() + "    context_window: 2048\n")
    (home / "config" / "tools" / "page.md").write_text(
        f'---\nname: page\npermission: auto\nendpoint: "{pages.base}/page"\n'
        "parameters:\n  - name: n\n    type: string\n    required: true\n---\nReads a page.\n"
    )
    app = App(home, "context")
    try:
        app.pick_agent("tester")
        app.send("Read the report")
        app.wait(lambda d: "answer is 42" in last_answer(app), "the final answer", timeout=60)
        # Every full result is still on screen, one card a page.
        cards = app.driver.find_elements(By.CSS_SELECTOR, '[data-testid="tool-card-page"]')
        assert [c.get_attribute("data-status") for c in cards] == ["succeeded"] * ROUNDS

        # The meter: the last request's share of the 2,048-token window, named for assistive tech.
        meter = app.by_testid("context-meter")
        assert meter.get_attribute("role") == "meter"
        assert meter.get_attribute("aria-valuemax") == "2048"
        assert 0 < int(meter.get_attribute("aria-valuenow")) <= 2048
        assert "/ 2k tokens" in meter.text, meter.text

        # Where the view was shortened: the note's divider, its note one disclosure away.
        shown = markers(app)
        assert [m for m in shown if m["kind"] == "note"], shown
        note = next(
            m for m in app.driver.find_elements(By.CSS_SELECTOR, '[data-testid="context-marker"]')
            if m.get_attribute("data-kind") == "note"
        )
        assert "Earlier messages condensed for the model" in note.text
        note.find_element(By.CSS_SELECTOR, '[data-testid="context-note-toggle"]').click()
        app.wait(lambda d: NOTE in note.find_element(By.CSS_SELECTOR, '[data-testid="context-note"]').text, "the note")
        app.screenshot("condensed")
        notes_live = sum(1 for m in shown if m["kind"] == "note")
    finally:
        app.stop()

    # After a restart the stored note is marked at the same place, once per note.
    app = App(home, "context_reopened")
    try:
        app.wait(lambda d: d.find_elements(By.CSS_SELECTOR, '[data-testid="conversation-item"]'), "the conversation")
        app.driver.find_element(By.CSS_SELECTOR, '[data-testid="conversation-item"]').click()
        app.wait(lambda d: len(d.find_elements(By.CSS_SELECTOR, '[data-testid="tool-card-page"]')) == ROUNDS, "the history")
        reopened = [m for m in markers(app) if m["kind"] == "note"]
        assert len(reopened) == notes_live, (reopened, notes_live)
        # The meter shows the last request's share again, before any new request.
        app.wait(lambda d: d.find_elements(By.CSS_SELECTOR, '[data-testid="context-meter"]'), "the stored meter")
        assert app.by_testid("context-meter").get_attribute("aria-valuemax") == "2048"
    finally:
        app.stop()
        model.stop()
        pages.stop()
