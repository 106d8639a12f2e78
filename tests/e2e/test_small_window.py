"""The app at its minimum window size (720×480): the sidebar and the conversation list collapse
by themselves, the chat keeps a usable width, nothing scrolls sideways (chat, tool editor),
inline code wraps between words, the collapse toggle's state survives a restart, and the
permission dialog keeps every decision button on screen while a long request scrolls inside it."""

from __future__ import annotations

import json
from pathlib import Path

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
            assert app.sideways(selector) <= 0, f"{selector} scrolls sideways at 720×480"
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
            assert app.sideways(selector) <= 0, f"{selector} scrolls sideways at 720×480"
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


MANY = [f"p{i:02d}" for i in range(16)]
LOOKUP_AGENT = AGENT.replace("create_artifact: auto", "lookup: confirm")


def lookup_call() -> str:
    params = "".join(f"<{n}><![CDATA[value of {n}, long enough to be read]]></{n}>" for n in MANY)
    return f"<tool_call><name>lookup</name><params>{params}</params></tool_call>"


def minimum_size() -> tuple[int, int]:
    """The main window's minimum size as tauri.conf.json sets it."""
    conf = json.loads((Path(__file__).resolve().parents[2] / "tauri.conf.json").read_text())
    [main] = [w for w in conf["app"]["windows"] if w["label"] == "main"]
    return main["minWidth"], main["minHeight"]


def fully_on_screen(app: App, testid: str) -> bool:
    """Is the element inside the window and inside its dialog's visible box, and is it the
    element a click on its middle reaches (nothing scrolled away or covering it)?"""
    return app.js(
        "const el = document.querySelector(`[data-testid=\"${arguments[0]}\"]`);"
        "if (!el) return false;"
        "const r = el.getBoundingClientRect(), d = el.closest('dialog').getBoundingClientRect();"
        "const inside = r.width > 0 && r.height > 0 && r.top >= 0 && r.left >= 0"
        " && r.bottom <= window.innerHeight && r.right <= window.innerWidth"
        " && r.top >= d.top && r.bottom <= d.bottom && r.left >= d.left && r.right <= d.right;"
        "const hit = document.elementFromPoint(r.left + r.width / 2, r.top + r.height / 2);"
        "return inside && !!hit && el.contains(hit)",
        testid,
    )


def test_permission_dialog_answers_stay_on_screen_at_the_minimum_window(home, scripted_model):
    model = scripted_model([{"text": lookup_call()}, {"text": "Looked it up."}])
    prepare_home(home, model, LOOKUP_AGENT)
    parameters = "".join(f"  - name: {n}\n    type: string\n" for n in MANY)
    (home / "config" / "tools" / "lookup.md").write_text(
        f"---\nname: lookup\npermission: confirm\nendpoint: \"{model.base_url}/requests\"\n"
        f"response_extract: \"$[0].path\"\nparameters:\n{parameters}---\nLooks up.\n"
    )
    width, height = minimum_size()
    app = App(home, "small_window_permission")
    try:
        app.by_testid("status-area")
        app.driver.set_window_rect(width=width, height=height)
        app.wait(lambda d: app.js("return window.innerWidth") <= width, f"the window at {width} px")
        app.pick_agent("tester")
        app.send("Look it up")
        app.wait(
            lambda d: app.js("const d = document.querySelector('[data-testid=permission-dialog]'); return !!d && d.open"),
            "the permission dialog",
        )
        app.wait(lambda d: app.permission_armed(), "the permission dialog to arm")
        # The request is longer than the window: its body scrolls, the dialog itself does not.
        sizes = app.js(
            "const d = document.querySelector('[data-testid=permission-dialog]');"
            "const b = document.querySelector('[data-testid=permission-body]');"
            "return [d.scrollHeight - d.clientHeight, b.scrollHeight - b.clientHeight,"
            " d.getBoundingClientRect().bottom, window.innerHeight]"
        )
        assert sizes[0] <= 0, f"the dialog itself scrolls at {width}×{height}: {sizes}"
        assert sizes[1] > 0, f"the request should overflow the dialog's body here: {sizes}"
        assert sizes[2] <= sizes[3], f"the dialog ends below the window: {sizes}"
        for testid in ("permission-deny", "permission-always", "permission-like-this", "permission-approve", "permission-countdown"):
            assert fully_on_screen(app, testid), f"{testid} is not on screen at {width}×{height}"
        app.screenshot(f"permission-{width}x{height}")
        # "Calls like this…" opens the rule at the end of the scrolling body; however many
        # conditions it grows, its Back and Save & approve stay in the footer, on screen.
        app.by_testid("permission-like-this").click()
        app.by_testid("permission-rule-editor")
        for _ in range(4):
            app.by_testid("permission-rule-add").click()
        for testid in ("permission-deny", "permission-rule-cancel", "permission-save-rule"):
            assert fully_on_screen(app, testid), f"{testid} is not on screen at {width}×{height}"
        app.screenshot(f"permission-rule-{width}x{height}")
        app.by_testid("permission-rule-cancel").click()
        app.wait(lambda d: fully_on_screen(app, "permission-approve"), "Approve back in the footer")
        app.by_testid("permission-approve").click()
        app.wait(lambda d: "Looked it up." in app.by_testid("timeline").text, "the end of the run")
    finally:
        app.stop()


def test_800_wide_with_the_sidebar_shown_keeps_the_chat_and_its_composer_header_usable(home, scripted_model):
    model = scripted_model([{"text": "Fine."}])
    prepare_home(home, model, AGENT)
    app = App(home, "small_window_800")
    try:
        app.by_testid("status-area")
        app.driver.set_window_rect(width=800, height=600)
        app.wait(lambda d: app.js("return window.innerWidth") <= 800, "the window at 800 px")
        app.wait(lambda d: collapsed(app), "the sidebar to collapse below 960 px")
        app.by_testid("sidebar-toggle").click()
        app.wait(lambda d: not collapsed(app), "the sidebar shown by hand")
        app.pick_agent("tester")
        width = app.js("return document.querySelector('.chat-main').getBoundingClientRect().width")
        assert width >= 400, f"the chat column is {width} px wide at 800×600 with the sidebar shown"
        # The composer's header (agent, model, context meter) stays one row.
        spread = app.js(
            "const head = document.querySelector('.composer-agent');"
            "const mids = [...head.children].map((c) => c.getBoundingClientRect())"
            ".filter((r) => r.height > 0).map((r) => r.top + r.height / 2);"
            "return Math.max(...mids) - Math.min(...mids)"
        )
        assert spread < 8, f"the composer header wraps at 800×600 (its items' middles {spread:.0f} px apart)"
        for selector in (".content", ".chat", ".chat-main"):
            assert app.sideways(selector) <= 0, f"{selector} scrolls sideways at 800×600"
        app.screenshot("chat-800x600-sidebar")
    finally:
        app.stop()
