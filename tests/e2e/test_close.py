"""Closing the window the way a window manager does: the app ends (so the next launch opens a
window rather than handing over to a process without one), nothing runs unattended, and unsaved
edits are asked about first."""

from __future__ import annotations

import json
import urllib.request

from selenium.webdriver.common.by import By

from harness import App, prepare_home, running_apps

AGENT = """---
name: tester
description: Test agent
model: default
tools:
  probe: confirm
max_tool_rounds: 5
---
You are the tester.
"""

PROBE = "<tool_call><name>probe</name><params></params></tool_call>"


def dialog_open(app: App, testid: str) -> bool:
    return app.js(f"const d = document.querySelector('[data-testid={testid}]'); return !!d && d.open")


def model_requests(base_url: str) -> list[dict]:
    with urllib.request.urlopen(f"{base_url}/requests", timeout=10) as r:
        return json.loads(r.read())


def test_closing_the_window_ends_the_app_and_its_waiting_run(home, scripted_model):
    model = scripted_model([{"text": "Probing.\n" + PROBE}, {"text": "This answer is never asked for."}])
    prepare_home(home, model, AGENT)
    app = App(home, "close_while_asking")
    try:
        app.pick_agent("tester")
        app.send("Probe it")
        app.wait(lambda d: dialog_open(app, "permission-dialog"), "the permission dialog")

        pid = app.app_pid()
        app.request_close()
        assert app.wait_for_exit(pid), "the app still runs after its window was closed"
    finally:
        app.stop()
    assert "ArtifactFlow exiting" in app.log_text(), "the log is flushed at exit"
    # The waiting tool call was denied, not run, and the model was not asked to go on.
    assert len(model_requests(model.base_url)) == 1

    # The next launch opens a window on the same data, with the conversation kept.
    again = App(home, "close_relaunch")
    try:
        again.wait(lambda d: len(again.driver.find_elements(By.CSS_SELECTOR, '[data-testid="conversation-item"]')) == 1,
                   "the conversation in the sidebar")
        again.by_testid("conversation-item").click()
        again.wait(lambda d: "Probing." in again.by_testid("timeline").text, "the kept conversation")
        # The stop is on record, as the same card a live run shows: the call that waited did not run.
        card = again.by_testid("tool-card-probe")
        assert card.get_attribute("data-status") == "not_run"
        reason = card.find_element(By.CSS_SELECTOR, '[data-testid="tool-reason"]').text
        assert reason == "Not run: the run was stopped while waiting for permission", reason
        assert again.text_of("run-end") == "Run cancelled."
        again.screenshot("history")
    finally:
        again.stop()


def test_closing_with_unsaved_edits_asks_first(app: App):
    app.wait(lambda d: app.heading() == "Welcome to ArtifactFlow", "the first-run setup")
    app.driver.find_element(By.XPATH, "//button[starts-with(text(), 'Skip')]").click()
    app.by_testid("nav-tools").click()
    app.by_testid("new-tool").click()
    name = app.by_testid("tool-name")
    app.type_text(name, "half_done")
    pid = app.app_pid()

    app.request_close()
    app.wait(lambda d: dialog_open(app, "leave-dialog"), "the unsaved-changes question")
    app.driver.find_element(By.XPATH, "//button[text()='Keep editing']").click()
    app.wait(lambda d: not dialog_open(app, "leave-dialog"), "the question to go away")
    assert pid in running_apps(), "keeping the edits keeps the app"
    assert app.by_testid("tool-name").get_attribute("value") == "half_done"

    app.request_close()
    app.wait(lambda d: dialog_open(app, "leave-dialog"), "the question again")
    discard = app.driver.find_element(By.XPATH, "//button[text()='Discard changes']")
    # Clicked from the page a moment later, so the WebDriver call returns before the window goes.
    app.js("const b = arguments[0]; setTimeout(() => b.click(), 100)", discard)
    assert app.wait_for_exit(pid), "the app still runs after discarding and closing"
    assert not (app.home / "config" / "tools" / "half_done.md").exists()
