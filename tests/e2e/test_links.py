"""Links in answers never navigate the app window away: http(s) and mailto links open in the
system browser (in E2E builds the opener writes the URL to a log instead, see
src-tauri/src/seams.rs), others are refused with a notice, and the window's navigation guard
refuses whatever gets past the UI."""

from __future__ import annotations

from pathlib import Path

from selenium.webdriver.common.by import By

from harness import App, prepare_home

AGENT = """---
name: tester
description: Test agent
model: default
tools: {}
---
You are the tester.
"""

ANSWER = "Read [the docs](https://docs.example.com/guide?page=2) or call [the desk](tel:+100200300)."


def test_a_link_in_an_answer_opens_outside_and_the_app_stays(home, scripted_model, tmp_path: Path):
    opened = tmp_path / "opened.log"
    model = scripted_model([{"text": ANSWER}])
    prepare_home(home, model, AGENT)
    app = App(home, "links", {"ARTIFACTFLOW_TEST_OPENER_LOG": str(opened)})
    try:
        app.pick_agent("tester")
        app.send("Where are the docs?")
        answer = app.by_testid("msg-assistant")
        app.wait(lambda d: "call the desk" in answer.text, "the answer with its links")
        page = app.js("return location.href")

        answer.find_element(By.LINK_TEXT, "the docs").click()
        app.wait(lambda d: opened.is_file() and opened.read_text().strip() != "", "the opener to receive the link")
        assert opened.read_text().splitlines() == ["https://docs.example.com/guide?page=2"]
        assert app.js("return location.href") == page, "the window stayed on the app"
        assert "call the desk" in app.by_testid("msg-assistant").text, "the conversation is still shown"

        # Any other kind of link is refused, visibly, and nothing opens.
        answer.find_element(By.LINK_TEXT, "the desk").click()
        app.wait(lambda d: "Not opened: tel:+100200300" in app.text_of("link-notice"), "the refusal notice")
        assert opened.read_text().splitlines() == ["https://docs.example.com/guide?page=2"]

        # A navigation the UI did not stop is refused by the window itself.
        app.js("window.location.href = arguments[0]", f"{model.base_url}/requests")
        app.wait(lambda d: "navigation refused" in app.log_text(), "the navigation guard's refusal in the log")
        assert app.js("return location.href") == page
        assert "call the desk" in app.by_testid("msg-assistant").text
        app.screenshot("links")
    finally:
        app.stop()
