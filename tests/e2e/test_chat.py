"""Chat through the real app against the scripted model: streaming, tool cards and the
permission dialog (approve, deny, always allow, timeout), and cancel mid-stream."""

from __future__ import annotations

from selenium.webdriver.common.action_chains import ActionChains
from selenium.webdriver.common.by import By
from selenium.webdriver.common.keys import Keys

from harness import App, prepare_home

AGENT = """---
name: tester
description: Test agent
model: default
tools:
  create_artifact: auto
  probe: confirm
max_tool_rounds: 5
---
You are the tester.
"""

CREATE = "<tool_call><name>create_artifact</name><params><id><![CDATA[notes]]></id><title><![CDATA[Notes]]></title><content><![CDATA[# Notes\nE2E]]></content></params></tool_call>"
PROBE = "<tool_call><name>probe</name><params></params></tool_call>"


def start_chat(home, scripted_model, turns, name, settings=""):
    model = scripted_model(turns)
    prepare_home(home, model, AGENT, settings)
    app = App(home, name)
    app.pick_agent("tester")
    return app


def card_status(app: App, tool: str, index: int = 0) -> str:
    cards = app.driver.find_elements(By.CSS_SELECTOR, f'[data-testid="tool-card-{tool}"]')
    return cards[index].get_attribute("data-status") if len(cards) > index else ""


def dialog_open(app: App) -> bool:
    return app.js("const d = document.querySelector('[data-testid=permission-dialog]'); return !!d && d.open")


def test_auto_tool_then_confirm_tool_approved(home, scripted_model):
    app = start_chat(home, scripted_model, [
        {"text": "Writing notes.\n" + CREATE, "chunk_chars": 12},
        {"text": PROBE},
        {"text": "All **done**."},
    ], "chat_approve")
    try:
        app.send("Make notes")
        app.wait(lambda d: card_status(app, "create_artifact") == "succeeded", "the auto tool card")
        assert "notes" in app.by_testid("artifact-link").text
        app.wait(lambda d: dialog_open(app), "the permission dialog")
        dialog = app.by_testid("permission-dialog")
        assert "Allow probe to run?" in dialog.text
        assert "GET http://127.0.0.1:" in app.text_of("permission-http")
        assert "Goes to http://127.0.0.1:" in app.text_of("permission-destination")
        assert app.text_of("permission-asker") == "Asked by tester → probe in Make notes"
        app.screenshot("permission-dialog")
        app.answer_permission("approve")
        app.wait(lambda d: card_status(app, "probe") == "succeeded", "the approved tool's card")
        app.wait(lambda d: "All done." in app.driver.find_elements(By.CSS_SELECTOR, '[data-testid="msg-assistant"]')[-1].text, "the final answer")
        assert not dialog_open(app)
        app.screenshot("chat-done")
        # The card's artifact link opens what the tool wrote, rendered.
        app.by_testid("artifact-link").click()
        viewer = app.by_testid("artifact-viewer")
        app.wait(lambda d: "E2E" in viewer.text, "the artifact's content")
        assert viewer.find_element(By.TAG_NAME, "h1").text == "Notes"
        viewer.find_element(By.XPATH, ".//button[starts-with(text(), 'Close')]").click()
        # The library finds it by full-text search across conversations.
        app.by_testid("nav-artifacts").click()
        app.by_testid("artifact-search").send_keys("E2E")
        app.wait(lambda d: "1 artifact" in app.text_of("artifact-count"), "the search result")
        app.by_testid("artifact-item").click()
        app.wait(lambda d: "E2E" in app.text_of("artifact-content"), "the artifact in the library viewer")
    finally:
        app.stop()


def test_denied_and_always_allowed(home, scripted_model):
    app = start_chat(home, scripted_model, [
        {"text": PROBE},
        {"text": "Understood, not probing."},
        {"text": PROBE},
        {"text": PROBE},
        {"text": "Probed twice."},
    ], "chat_deny_always")
    try:
        app.send("Probe please")
        app.wait(lambda d: dialog_open(app), "the first dialog")
        app.by_testid("permission-deny").click()
        app.wait(lambda d: card_status(app, "probe") == "denied", "a denied card")
        app.wait(lambda d: "not probing" in app.by_testid("timeline").text, "the model's reply to the denial")

        app.send("Probe twice")
        app.wait(lambda d: dialog_open(app), "the second dialog")
        app.answer_permission("always")
        app.wait(lambda d: "Probed twice." in app.by_testid("timeline").text, "the end of the run")
        assert card_status(app, "probe", 1) == "succeeded"
        assert card_status(app, "probe", 2) == "succeeded", "the second call ran without asking"
        assert not dialog_open(app)
    finally:
        app.stop()


def test_enter_typed_into_the_composer_never_approves(home, scripted_model):
    """Someone typing Enter in the composer while a request arrives must not approve it: the
    keys land in the dialog, which stays disarmed while they keep coming."""
    app = start_chat(home, scripted_model, [{"text": PROBE}, {"text": "Probed once."}], "chat_enter_guard")
    try:
        app.send("Probe please")
        composer = app.by_testid("composer-input")
        presses = 0
        while not dialog_open(app):
            app.js("arguments[0].focus()", composer)
            ActionChains(app.driver).send_keys(Keys.ENTER).perform()
            presses += 1
            assert presses < 400, "the permission dialog never opened"
        # The request is shown: the typing goes on, in bursts, and now lands in the dialog.
        for _ in range(5):
            ActionChains(app.driver).send_keys(Keys.ENTER * 4).perform()
        assert dialog_open(app), "an Enter meant for the composer answered the request"
        assert card_status(app, "probe") not in ("running", "succeeded"), "the tool ran without approval"
        # The same key, pressed once the dialog has armed, approves: the keys did reach it.
        app.wait(lambda d: app.permission_armed(), "the permission dialog to arm")
        ActionChains(app.driver).send_keys(Keys.ENTER).perform()
        app.wait(lambda d: card_status(app, "probe") == "succeeded", "the approved tool's card")
        app.wait(lambda d: "Probed once." in app.by_testid("timeline").text, "the final answer")
    finally:
        app.stop()


def test_an_unanswered_request_times_out(home, scripted_model):
    app = start_chat(home, scripted_model, [{"text": PROBE}, {"text": "Timed out, moving on."}], "chat_timeout",
                     settings="permission_timeout_secs: 2\n")
    try:
        app.send("Probe")
        app.wait(lambda d: dialog_open(app), "the dialog")
        assert "denied automatically in" in app.text_of("permission-countdown")
        app.wait(lambda d: card_status(app, "probe") == "denied", "the timeout to deny", timeout=30)
        app.wait(lambda d: not dialog_open(app), "the dialog to close")
        app.wait(lambda d: "moving on" in app.by_testid("timeline").text, "the model's reply")
    finally:
        app.stop()


def test_cancel_mid_stream(home, scripted_model):
    app = start_chat(home, scripted_model, [{"text": "word " * 400, "chunk_chars": 5, "chunk_delay_ms": 30}], "chat_cancel")
    try:
        app.send("Talk a lot")
        app.wait(lambda d: len(app.driver.find_elements(By.CSS_SELECTOR, '[data-testid="msg-assistant"]')) > 0, "streaming to start")
        app.by_testid("cancel-run").click()
        assert "Run cancelled." in app.text_of("run-end")
        app.by_testid("retry")
        streamed = app.driver.find_elements(By.CSS_SELECTOR, '[data-testid="msg-assistant"]')[0].text
        assert 0 < streamed.count("word") < 400, "the answer stopped part-way"
    finally:
        app.stop()
