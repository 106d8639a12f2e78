"""The app at its minimum window size (720×480): the sidebar and the conversation list collapse
by themselves, the chat keeps a usable width, nothing scrolls sideways (chat, tool editor),
inline code wraps between words, and the collapse toggle's state survives a restart."""

from __future__ import annotations

from harness import App, prepare_home

AGENT = """---
name: tester
description: Test agent
model: default
tools:
  create_artifact: auto
max_tool_rounds: 2
---
You are the tester.
"""

LONG_TOKEN = "https://example.com/" + "a-very-long-path-segment/" * 8
ANSWER = (
    "Name things with `snake_case_identifiers_like_this` in Python and `camelCaseNames` in "
    f"JavaScript; the reference is `{LONG_TOKEN}`. " * 3
)


def collapsed(app: App) -> bool:
    return app.js("return document.querySelector('.app').classList.contains('collapsed')")


def sideways(app: App, selector: str) -> int:
    """How far the element `selector` can scroll sideways (0 when it cannot)."""
    return app.js(
        "const el = document.querySelector(arguments[0]);"
        "return el ? el.scrollWidth - el.clientWidth : -1",
        selector,
    )


def test_minimum_window_collapses_and_keeps_the_chat_usable(home, scripted_model):
    model = scripted_model([{"text": ANSWER, "chunk_chars": 40}])
    prepare_home(home, model, AGENT)
    app = App(home, "small_window_1")
    try:
        app.by_testid("status-area")
        app.driver.set_window_rect(width=720, height=480)
        app.wait(lambda d: app.js("return window.innerWidth") <= 720, "the window at 720 px")
        app.wait(lambda d: collapsed(app), "the sidebar and conversation list to collapse")
        toggle = app.by_testid("sidebar-toggle")
        assert toggle.get_attribute("aria-label") == "Show the sidebar and conversation list"
        assert toggle.get_attribute("aria-expanded") == "false"
        width = app.js("return document.querySelector('.chat-main').getBoundingClientRect().width")
        assert width >= 440, f"the chat column is {width} px wide at 720×480"

        app.pick_agent("tester")
        app.send("How do I name things?")
        app.wait(lambda d: "JavaScript" in app.by_testid("msg-assistant").text, "the answer")
        app.wait(lambda d: not app.js("return !!document.querySelector('[data-testid=run-status]')"), "the run to end")
        for selector in (".content", ".chat", ".chat-main", "[data-testid=timeline]", "[data-testid=msg-assistant]"):
            assert sideways(app, selector) <= 0, f"{selector} scrolls sideways at 720×480"
        # Inline code breaks between words, and only a token longer than the line is cut.
        style = app.js(
            "const c = [...document.querySelectorAll('[data-testid=msg-assistant] code')]"
            ".find((el) => el.textContent.startsWith('snake_case'));"
            "const s = getComputedStyle(c); return [s.wordBreak, s.overflowWrap, c.getClientRects().length]"
        )
        assert style[0] == "normal" and style[1] == "anywhere", style
        assert style[2] == 1, f"a short identifier is not split across lines: {style}"
        app.screenshot("chat-720x480")

        # The tool editor reflows too.
        app.by_testid("nav-tools").click()
        app.by_testid("new-tool").click()
        app.by_testid("tool-editor")
        for selector in (".content", "[data-testid=tool-editor]"):
            assert sideways(app, selector) <= 0, f"{selector} scrolls sideways at 720×480"
        assert app.js("return document.documentElement.scrollWidth <= window.innerWidth")
        app.screenshot("tool-editor-720x480")

        # Expanded by hand, then restarted: still expanded.
        app.by_testid("sidebar-toggle").click()
        app.wait(lambda d: not collapsed(app), "the sidebar to expand")
    finally:
        app.stop()

    again = App(home, "small_window_2")
    try:
        again.by_testid("status-area")
        again.wait(lambda d: again.js("return window.innerWidth") <= 720, "the 720 px window restored")
        toggle = again.by_testid("sidebar-toggle")
        assert not collapsed(again), "the toggle's state survived the restart"
        assert toggle.get_attribute("aria-expanded") == "true"
        assert toggle.get_attribute("aria-label") == "Hide the sidebar and conversation list"
        toggle.click()
        again.wait(lambda d: collapsed(again), "the sidebar to collapse again")
    finally:
        again.stop()
