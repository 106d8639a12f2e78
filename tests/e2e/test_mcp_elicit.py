"""An MCP server's form in the real app: a run calls server-everything's
trigger-elicitation-request, the form shows the schema's defaults, and accepting sends them
(with the typed name) back to the server, whose answer the tool card shows."""

from __future__ import annotations

import json
import shutil

from selenium.webdriver.common.by import By

from harness import ROOT, App, prepare_home

EVERYTHING = ROOT / "tests/mcp/node_modules/@modelcontextprotocol/server-everything/dist/index.js"
TOOL = "everything.trigger-elicitation-request"

AGENT = """---
name: tester
description: Test agent
model: default
tools:
  everything.*: auto
max_tool_rounds: 3
---
You are the tester.
"""


def form_open(app: App) -> bool:
    return app.js("const d = document.querySelector('[data-testid=elicitation-dialog]'); return !!d && d.open")


def field(app: App, name: str):
    return app.driver.find_element(By.CSS_SELECTOR, f'[data-testid=elicitation-dialog] [data-field="{name}"]')


def test_a_servers_form_shows_its_defaults_and_accepting_sends_them(home, scripted_model):
    assert EVERYTHING.is_file(), "server-everything is not installed: run `npm ci --prefix tests/mcp`"
    model = scripted_model([
        {"text": f"<tool_call><name>{TOOL}</name><params></params></tool_call>"},
        {"text": "Thanks."},
    ])
    prepare_home(home, model, AGENT)
    node = shutil.which("node")
    assert node, "node is not on PATH"
    (home / "config" / "mcp.json").write_text(
        json.dumps({"mcpServers": {"everything": {"command": node, "args": [str(EVERYTHING), "stdio"]}}})
    )
    app = App(home, "mcp_elicit")
    try:
        # The server starts in the background; the run starts once its tools are in.
        app.wait(lambda d: 'server="everything" status=Ready' in app.log_text(), "server-everything ready")
        app.pick_agent("tester")
        app.send("Ask me")
        app.wait(lambda d: form_open(app), "the server's form")
        dialog = app.by_testid("elicitation-dialog")
        assert "everything asks for information" in dialog.text
        assert "Please provide inputs for the following fields:" in app.text_of("elicitation-message")
        assert "Ask me" in app.text_of("elicitation-origin")
        assert field(app, "firstLine").get_attribute("value") == "It was a dark and stormy night."
        assert field(app, "integer").get_attribute("value") == "42"
        assert field(app, "titledSingleSelectEnum").get_attribute("value") == "hero-1"
        app.screenshot("elicitation-form")
        # Accept works once the form has been on screen a moment (ElicitationDialog.tsx).
        app.wait(
            lambda d: app.js("return document.querySelector('[data-testid=elicitation-dialog]').dataset.armed === 'true'"),
            "the form to arm",
        )
        # The required name is missing: nothing is sent.
        app.by_testid("elicitation-accept").click()
        app.wait(lambda d: "required" in dialog.text, "the required field's error")
        assert form_open(app)
        app.set_value(field(app, "name"), "Ada Lovelace")
        app.by_testid("elicitation-accept").click()
        app.wait(lambda d: not form_open(app), "the form to close")
        card = f'[data-testid="tool-card-{TOOL}"]'
        app.wait(
            lambda d: (d.find_elements(By.CSS_SELECTOR, card) or [None])[0] is not None
            and d.find_element(By.CSS_SELECTOR, card).get_attribute("data-status") == "succeeded",
            "the tool card succeeded",
        )
        # The result preview, as the card shows it (textContent: WebKitWebDriver's element
        # text leaves out the preview's emoji line and what follows).
        text = app.js(f"return document.querySelector('{card} .tool-result-preview').textContent")
        assert "- Name: Ada Lovelace" in text, text
        assert "- Favorite Integer: 42" in text, text
    finally:
        app.stop()
