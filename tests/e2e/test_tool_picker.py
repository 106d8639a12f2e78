"""Giving tools to an agent without typing YAML (issue 33), in the real app at 800×600 in the
dark theme: the agent editor's tool picker gives the HTTP tool `probe` to the tester agent with
the permission chosen there (the agent file changes by that one line, nothing else), and the
Tools page's "Add to agent…" gives it another; the tool's "used by" line follows."""

from __future__ import annotations

from selenium.webdriver.common.by import By

from harness import App, prepare_home

AGENT = """---
name: tester
description: Test agent
model: default
# the tools it may call
tools:
  create_artifact: auto
max_tool_rounds: 5
---
You are the tester.
"""


def dialog_open(app: App, testid: str) -> bool:
    return app.js(f"const d = document.querySelector('[data-testid={testid}]'); return !!d && d.open")


def test_give_an_http_tool_through_the_picker_and_add_to_agent(home, scripted_model):
    model = scripted_model([])
    prepare_home(home, model, AGENT)
    agent_file = home / "config" / "agents" / "tester.md"
    app = App(home, "tool_picker")
    try:
        app.driver.set_window_rect(width=800, height=600)
        app.wait(lambda d: app.js("return window.innerWidth") <= 800, "the window at 800 px")
        app.set_theme("dark")

        # The agent editor's picker: search, tick, choose the permission.
        app.by_testid("nav-agents").click()
        app.by_testid("agent-tester").click()
        app.by_testid("edit-agent").click()
        raw = app.by_testid("agent-raw")
        app.by_testid("pick-tools").click()
        app.wait(lambda d: dialog_open(app, "tool-picker"), "the tool picker")
        search = app.by_testid("tool-picker-search")
        assert app.js("return document.activeElement === arguments[0]", search), "the search box has the focus"
        app.by_testid("pick-probe")  # the tool list has loaded
        search.send_keys("probe")
        app.wait(lambda d: len(d.find_elements(By.CSS_SELECTOR, ".tool-picker-row")) == 1, "only probe listed")
        row = app.by_testid("pick-probe")
        assert "confirm" in row.text, row.text  # its default permission
        row.find_element(By.CSS_SELECTOR, "input[type=checkbox]").click()
        app.wait(lambda d: "  probe: confirm\n" in raw.get_attribute("value"), "probe in the draft")
        app.set_value(app.by_testid("pick-permission-probe"), "auto")
        app.wait(lambda d: "  probe: auto\n" in raw.get_attribute("value"), "probe's permission in the draft")
        for selector in (".tool-picker", ".tool-picker-list"):
            assert app.sideways(selector) <= 0, f"{selector} scrolls sideways at 800×600"
        assert app.js("return document.documentElement.scrollWidth <= window.innerWidth")
        app.screenshot("picker-dark-800x600")
        app.by_testid("tool-picker-done").click()
        app.wait(lambda d: not dialog_open(app, "tool-picker"), "the picker to close")
        app.wait(lambda d: app.js("return !!document.querySelector('[data-testid=no-problems]')"), "a valid agent")
        app.by_testid("save-agent").click()
        expected = AGENT.replace("  create_artifact: auto\n", "  create_artifact: auto\n  probe: auto\n")
        app.wait(lambda d: agent_file.read_text() == expected, "the saved agent file (one line added)")
        app.by_testid("close-editor").click()

        # The Tools page: probe is used by the tester; "Add to agent…" gives it read_artifact.
        app.by_testid("nav-tools").click()
        app.wait(lambda d: "used by tester (auto)" in app.by_testid("tool-row-probe").text, "probe's users")
        row = app.by_testid("tool-row-read_artifact")
        row.find_element(By.TAG_NAME, "summary").click()
        app.by_testid("add-to-agent-read_artifact").click()
        app.wait(lambda d: dialog_open(app, "add-to-agent"), "the Add to agent dialog")
        agent = app.by_testid("add-to-agent-agent")
        app.wait(lambda d: agent.find_elements(By.CSS_SELECTOR, "option"), "the agents listed")
        value = app.js(
            "return [...arguments[0].options].find((o) => o.value.endsWith('/tester.md')).value", agent
        )
        app.set_value(agent, value)
        app.set_value(app.by_testid("add-permission-read_artifact"), "confirm")
        assert app.sideways(".add-to-agent") <= 0, "the dialog scrolls sideways at 800×600"
        app.screenshot("add-to-agent-dark-800x600")
        confirm = app.by_testid("add-to-agent-confirm")
        app.wait(lambda d: confirm.is_enabled(), "the Add button")
        confirm.click()
        app.wait(lambda d: not dialog_open(app, "add-to-agent"), "the dialog to close")
        expected = expected.replace("  probe: auto\n", "  probe: auto\n  read_artifact: confirm\n")
        app.wait(lambda d: agent_file.read_text() == expected, "the agent file with read_artifact")
        app.wait(lambda d: "Gave read_artifact to tester." in app.text_of("tools-notice"), "the notice")
        users = lambda: app.by_testid("tool-row-read_artifact").text.partition("used by")[2]  # noqa: E731
        app.wait(lambda d: "tester" in users(), "read_artifact's users")
    finally:
        app.stop()
