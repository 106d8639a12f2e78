"""The composer through the real app against the scripted model: focus stays in the message box
after a click on Send and Esc stops the run; Enter during a run queues the message and sends it
when the run ends (never shown as sent, the streamed answer stays one bubble); the live "waiting
for the model" state with its elapsed time, then the answer's speed."""

from __future__ import annotations

import re

from selenium.webdriver.common.action_chains import ActionChains
from selenium.webdriver.common.by import By
from selenium.webdriver.common.keys import Keys

from harness import App, prepare_home

AGENT = """---
name: tester
description: Test agent
model: default
tools: {}
max_tool_rounds: 2
---
You are the tester.
"""


def start(home, scripted_model, turns, name) -> App:
    prepare_home(home, scripted_model(turns), AGENT)
    app = App(home, name)
    app.pick_agent("tester")
    return app


def focused_testid(app: App) -> str:
    return app.js("const el = document.activeElement; return el ? el.getAttribute('data-testid') || el.tagName : ''")


def all_text(app: App, testid: str) -> list[str]:
    """The text of every element with ``testid``, read from the DOM (WebKitWebDriver's element
    text comes back empty for text cut with an ellipsis, as a queued message's is)."""
    return app.js(
        "return [...document.querySelectorAll(`[data-testid='${arguments[0]}']`)].map(e => e.textContent)",
        testid,
    )


def user_messages(app: App) -> list[str]:
    return app.js(
        "return [...document.querySelectorAll('[data-testid=msg-user] p')].map(p => p.textContent)"
    )


def test_focus_stays_in_the_composer_after_send_and_esc_stops_the_run(home, scripted_model):
    # The model takes a minute before its first token: the run is stopped long before.
    app = start(home, scripted_model, [{"text": "Too late.", "chunk_delay_ms": 60000}], "composer_focus")
    try:
        app.send("Think hard")  # a mouse click on Send
        app.by_testid("cancel-run")
        app.wait(lambda d: focused_testid(app) == "composer-input", "the focus back in the message box after Send")
        # The next Space is typed into the box; it does not press Cancel.
        ActionChains(app.driver).send_keys(" ").perform()
        box = app.by_testid("composer-input")
        app.wait(lambda d: box.get_attribute("value") == " ", "the space in the message box")
        assert not app.driver.find_elements(By.CSS_SELECTOR, '[data-testid="run-end"]'), "the run stopped"
        app.by_testid("cancel-run")
        # Nothing streams yet: the box says it waits, and counts.
        app.wait(
            lambda d: re.search(r"Waiting for the model… [1-9]\d* s", app.text_of("waiting-model")),
            "the waiting state to count seconds",
        )
        ActionChains(app.driver).send_keys(Keys.ESCAPE).perform()
        app.wait(lambda d: "Run cancelled." in app.text_of("run-end"), "Esc to stop the run")
        assert not app.driver.find_elements(By.CSS_SELECTOR, '[data-testid="cancel-run"]')
        assert not app.driver.find_elements(By.CSS_SELECTOR, '[data-testid="waiting-model"]')
        app.by_testid("retry")
    finally:
        app.stop()


def test_enter_during_a_run_queues_the_message_and_sends_it_when_the_run_ends(home, scripted_model):
    app = start(
        home,
        scripted_model,
        [
            {"text": "word " * 600, "chunk_chars": 10, "chunk_delay_ms": 60},
            {"text": "Second answer."},
        ],
        "composer_queue",
    )
    try:
        app.send("Talk a lot")
        app.wait(lambda d: all_text(app, "msg-assistant"), "streaming to start")
        box = app.by_testid("composer-input")
        app.set_value(box, "And then this")
        app.js("arguments[0].focus()", box)
        ActionChains(app.driver).send_keys(Keys.ENTER).perform()
        app.wait(lambda d: "And then this" in " ".join(all_text(app, "queued-item")), "the queued message")
        assert "Queued" in all_text(app, "queued")[0]
        # Queued while the first answer was still streaming (about 18 s in all).
        assert app.js("return document.querySelector('[data-testid=msg-assistant]').dataset.streaming") == "true"
        # Not shown as sent while the first answer streams on, in one bubble.
        assert user_messages(app) == ["Talk a lot"]
        assert box.get_attribute("value") == ""
        app.wait(
            lambda d: "Second answer." in app.by_testid("timeline").text,
            "the queued message's answer",
            timeout=90,
        )
        assert user_messages(app) == ["Talk a lot", "And then this"]
        answers = all_text(app, "msg-assistant")
        assert len(answers) == 2, answers
        assert answers[0].count("word") == 600, "the first answer was split or cut"
        assert not app.driver.find_elements(By.CSS_SELECTOR, '[data-testid="queued"]')
        app.screenshot("queued-sent")
        # Reopened in the same session, it shows the same two messages (as stored).
        app.by_testid("new-conversation").click()
        app.wait(lambda d: not user_messages(app), "the new conversation")
        app.by_testid("conversation-item").click()
        app.wait(lambda d: user_messages(app) == ["Talk a lot", "And then this"], "the reopened conversation")
        assert not app.driver.find_elements(By.CSS_SELECTOR, '[data-testid="chat-error"]')
    finally:
        app.stop()


def test_waiting_for_the_first_token_then_the_speed(home, scripted_model):
    # Three seconds before each of two chunks: a model preparing its first token.
    app = start(
        home,
        scripted_model,
        [{"text": "Slow to start, then done.", "chunk_chars": 13, "chunk_delay_ms": 3000}],
        "composer_waiting",
    )
    try:
        app.send("Take your time")
        app.wait(
            lambda d: re.search(r"Waiting for the model… [1-9]\d* s", app.text_of("waiting-model")),
            "the waiting state to count seconds",
        )
        app.screenshot("waiting")
        app.wait(lambda d: all_text(app, "msg-assistant"), "the first token")
        assert not app.driver.find_elements(By.CSS_SELECTOR, '[data-testid="waiting-model"]')
        app.wait(lambda d: "done." in " ".join(all_text(app, "msg-assistant")), "the whole answer")
        speed = app.wait(
            lambda d: (t := app.text_of("speed")) and "first token after" in t and t,
            "the answer's final speed",
        )
        match = re.fullmatch(r"(\d+\.\d) tokens/s · first token after (\d+\.\d) s", speed)
        assert match, speed
        # The server waited 3 s before the first chunk; the UI counts from the request, earlier.
        assert float(match.group(2)) >= 3.0, speed
        assert float(match.group(1)) > 0, speed
        # The scripted server reports usage, so the count is the server's (no "≈").
        assert app.text_of("usage") != "token usage unknown"
        print(f"\nwaiting scenario: {speed}")
        app.screenshot("speed")
    finally:
        app.stop()
