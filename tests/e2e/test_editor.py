"""The HTTP tool editor and the Agents page through the real app: create a tool in the editor
against a local HTTP server, save it, test-run it (permission included), let an agent call it,
then break the file and check the error is shown while the last good version keeps working."""

from __future__ import annotations

from selenium.webdriver.common.by import By

from harness import App, JsonServer, prepare_home

AGENT = """---
name: tester
description: Test agent
model: default
tools:
  create_artifact: auto
max_tool_rounds: 5
---
You are the tester.
"""

CALL = "<tool_call><name>weather_now</name><params><city><![CDATA[Oslo]]></city></params></tool_call>"


def weather_api() -> JsonServer:
    """A stand-in weather API on 127.0.0.1 that records every request."""
    return JsonServer(lambda path, base: {"data": {"temp": 21.5, "unit": "C"}})


def click_testid(app: App, testid: str) -> None:
    app.by_testid(testid).click()


def type_into(app: App, element, text: str) -> None:
    app.type_text(element, text)


def problems_text(app: App) -> str:
    return app.js(
        "const p = document.querySelector('[data-testid=problems]'); return p ? p.textContent : ''"
    )


def dialog_open(app: App) -> bool:
    return app.js("const d = document.querySelector('[data-testid=permission-dialog]'); return !!d && d.open")


def last_answer(app: App) -> str:
    msgs = app.driver.find_elements(By.CSS_SELECTOR, '[data-testid="msg-assistant"]')
    return msgs[-1].text if msgs else ""


def card_statuses(app: App, tool: str) -> list[str]:
    return [c.get_attribute("data-status") for c in app.driver.find_elements(By.CSS_SELECTOR, f'[data-testid="tool-card-{tool}"]')]


def test_create_test_use_and_break_an_http_tool(home, scripted_model):
    weather = weather_api()
    model = scripted_model([
        {"text": CALL},
        {"text": "It is 21.5 degrees in Oslo."},
        {"text": CALL},
        {"text": "Still 21.5 degrees."},
    ])
    prepare_home(home, model, AGENT)
    app = App(home, "tool_editor")
    try:
        # A new tool from the template, filled in through the form.
        click_testid(app, "nav-tools")
        click_testid(app, "new-tool")
        editor = app.by_testid("tool-editor")
        # A new tool starts clean: placeholders only, nothing the model would read that the
        # user did not write (no example description, usage notes, parameters or comments).
        assert app.by_testid("tool-description").get_attribute("value") == ""
        assert app.by_testid("tool-notes").get_attribute("value") == ""
        assert not editor.find_elements(By.CSS_SELECTOR, '[aria-label="Parameter 1 name"]')
        click_testid(app, "tab-markdown")
        template = app.by_testid("tool-raw").get_attribute("value")
        assert "#" not in template and "stock" not in template.lower(), template
        assert template.rstrip().endswith("---"), "no Markdown body the model would read"
        click_testid(app, "tab-form")
        type_into(app, app.by_testid("tool-name"), "weather_now")
        type_into(app, app.by_testid("tool-description"), "Current temperature in a city")
        type_into(app, app.by_testid("tool-endpoint"), f"{weather.base}/weather")
        app.set_value(app.by_testid("tool-method"), "GET")
        type_into(app, app.by_testid("tool-extract"), "$.data.temp")
        editor.find_element(By.XPATH, ".//button[text()='Add parameter']").click()
        type_into(app, app.wait(lambda d: editor.find_element(By.CSS_SELECTOR, '[aria-label="Parameter 1 name"]'), "the new parameter row"), "city")
        # The Type select is wide enough to show its longest value beside its arrow.
        kind = editor.find_element(By.CSS_SELECTOR, '[aria-label="Parameter 1 type"]')
        app.set_value(kind, "boolean")
        room = app.js(
            "const s = arguments[0], cs = getComputedStyle(s);"
            "const c = document.createElement('canvas').getContext('2d'); c.font = cs.font;"
            "const text = c.measureText(s.options[s.selectedIndex].text).width;"
            "return s.clientWidth - parseFloat(cs.paddingLeft) - parseFloat(cs.paddingRight) - text;",
            kind,
        )
        print(f"parameter Type select: {room:.0f} px beside the text 'boolean'", flush=True)
        assert room >= 16, f"the Type select cuts its value: {room:.0f} px left for the arrow"
        # The parameter table stays inside the form's column (it used to run under the test panel).
        overflow = app.js(
            "const t = document.querySelector('.param-editor').closest('fieldset').getBoundingClientRect();"
            "const m = document.querySelector('.editor-main').getBoundingClientRect();"
            "return t.right - m.right;"
        )
        assert overflow <= 1, f"the Parameters box runs {overflow:.0f} px past the form's column"
        # At the default window the table fits its box (no sideways scroll), and a name such as
        # "market" shows whole.
        fit = app.js(
            "const s = document.querySelector('.param-scroll');"
            "const n = document.querySelector('[aria-label=\"Parameter 1 name\"]');"
            "return [s.scrollWidth - s.clientWidth, n.getBoundingClientRect().width, window.innerWidth]"
        )
        print(f"parameter table: {fit[0]} px sideways, name field {fit[1]:.0f} px at {fit[2]} px", flush=True)
        assert fit[0] <= 0, f"the parameter table scrolls sideways by {fit[0]} px"
        assert fit[1] >= 100, f"the parameter name field is {fit[1]:.0f} px wide"
        app.set_value(kind, "string")
        type_into(app, editor.find_element(By.CSS_SELECTOR, '[aria-label="Parameter 1 description"]'), "City name")
        app.wait(lambda d: app.js("return !!document.querySelector('[data-testid=no-problems]')"), "a valid draft")
        # The Markdown view shows the same tool.
        click_testid(app, "tab-markdown")
        raw = app.by_testid("tool-raw").get_attribute("value")
        assert "name: weather_now" in raw and "method: GET" in raw and "name: city" in raw, raw
        click_testid(app, "tab-form")
        preview = lambda: app.js("return document.querySelector('[data-testid=instructions-preview]').textContent")  # noqa: E731
        app.wait(lambda d: '<tool name="weather_now">' in preview(), "the instruction preview of the draft")
        assert "<city>" in preview() or "city" in preview(), preview()
        click_testid(app, "save-tool")
        tool_file = home / "config" / "tools" / "weather_now.md"
        app.wait(lambda d: tool_file.is_file(), "the saved tool file")
        saved = tool_file.read_text()
        assert f'{weather.base}/weather' in saved and "$.data.temp" in saved
        app.wait(lambda d: "Saved to weather_now.md" in app.text_of("editor-notice"), "the saved notice")
        # The header names the tool; its full path is one "Show file" away (closed at first:
        # only the summary takes room; WebKit still gives the hidden path client rects).
        show_file = app.driver.find_element(By.CSS_SELECTOR, '[data-testid="tool-editor"] .editor-header [data-testid="show-file"]')
        path_shown = lambda: app.driver.execute_script(  # noqa: E731
            "const d = arguments[0];"
            "return d.getBoundingClientRect().height > d.querySelector('summary').getBoundingClientRect().height + 4",
            show_file)
        assert not show_file.get_attribute("open") and not path_shown()
        show_file.find_element(By.TAG_NAME, "summary").click()
        app.wait(lambda d: path_shown(), "the tool's path behind Show file")
        path = show_file.find_element(By.TAG_NAME, "code").text.strip()
        assert path.endswith("/tools/weather_now.md"), path
        show_file.find_element(By.TAG_NAME, "summary").click()
        app.wait(lambda d: not path_shown(), "Show file closed again")
        app.screenshot("tool-editor")

        # Test-run it: the permission dialog asks (confirm is the default), then the value shows.
        type_into(app, app.by_testid("test-param-city"), "Oslo")
        click_testid(app, "run-test")
        app.wait(lambda d: dialog_open(app), "the permission dialog for the test run")
        assert "weather_now" in app.by_testid("permission-dialog").text
        app.answer_permission("approve")
        app.wait(lambda d: app.js("return !!document.querySelector('[data-testid=test-output]')"), "the test result")
        assert app.text_of("test-output") == "21.5"
        assert app.text_of("test-outcome").startswith("Succeeded · HTTP 200")
        request = app.text_of("test-request")
        assert f"GET {weather.base}/weather?city=Oslo" in request, request
        assert '"temp": 21.5' in app.js("return document.querySelector('[data-testid=test-response]').textContent") or \
            '"temp":21.5' in app.js("return document.querySelector('[data-testid=test-response]').textContent")
        assert weather.requests == ["/weather?city=Oslo"]
        app.screenshot("tool-test")
        click_testid(app, "close-editor")

        # The Agents page: give the tester agent the new tool, with validation on the way.
        click_testid(app, "nav-agents")
        click_testid(app, "agent-tester")
        click_testid(app, "edit-agent")
        raw_agent = app.by_testid("agent-raw")
        app.set_value(raw_agent, AGENT.replace("  create_artifact: auto", "  create_artifact: auto\n  no_such_tool: auto"))
        app.wait(lambda d: "no_such_tool" in problems_text(app), "the unknown tool flagged")
        assert not app.by_testid("save-agent").is_enabled()
        app.set_value(raw_agent, AGENT.replace("  create_artifact: auto", "  create_artifact: auto\n  weather_now: auto"))
        app.wait(lambda d: app.js("return !!document.querySelector('[data-testid=no-problems]')"), "a valid agent")
        click_testid(app, "save-agent")
        agent_file = home / "config" / "agents" / "tester.md"
        app.wait(lambda d: "weather_now: auto" in agent_file.read_text(), "the saved agent file")

        # An agent run calls the tool.
        click_testid(app, "nav-chat")
        app.pick_agent("tester")
        app.send("Weather in Oslo?")
        app.wait(lambda d: card_statuses(app, "weather_now") == ["succeeded"], "the tool's card")
        app.wait(lambda d: "21.5 degrees in Oslo" in last_answer(app), "the answer")
        assert weather.requests == ["/weather?city=Oslo", "/weather?city=Oslo"]

        # Break the file on disk: the Tools page shows where, and the last good version still runs.
        tool_file.write_text(saved.replace("method: GET", "method: [GET"))
        click_testid(app, "nav-tools")
        app.wait(lambda d: "weather_now.md" in app.js(
            "const e = document.querySelector('[data-testid=config-errors]'); return e ? e.textContent : ''"), "the load error")
        errors = app.text_of("config-errors")
        assert "weather_now.md:" in errors, errors
        app.screenshot("tool-broken")
        # The editor opens the broken file and points at the problem.
        app.driver.find_element(By.XPATH, "//button[text()='Fix in editor']").click()
        app.wait(lambda d: problems_text(app) != "", "the problem in the editor")
        assert not app.by_testid("save-tool").is_enabled()
        click_testid(app, "close-editor")

        click_testid(app, "nav-chat")
        app.pick_agent("tester")
        app.send("And now?")
        # The chat reopened the same conversation: its first call is a card from history.
        app.wait(lambda d: card_statuses(app, "weather_now") == ["succeeded", "succeeded"], "the second call")
        app.wait(lambda d: "Still 21.5" in last_answer(app), "the second answer")
        assert len(weather.requests) == 3
    finally:
        app.stop()
        weather.stop()
