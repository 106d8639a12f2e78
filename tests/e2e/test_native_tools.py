"""A run through native tool calling in the real app: the profile says `tool_calls: native`, the
scripted model answers with an OpenAI `tool_calls` delta stream for a confirm tool, the
permission dialog asks, the approved call runs and its result goes back to the model as a `tool`
message under the provider's call id."""

from __future__ import annotations

import json
import urllib.request

from selenium.webdriver.common.by import By

from harness import App, prepare_home

AGENT = """---
name: tester
description: Test agent
model: default
tools:
  probe: confirm
max_tool_rounds: 3
---
You are the tester.
"""


def test_a_native_call_asks_runs_and_answers_under_its_id(home, scripted_model):
    model = scripted_model([
        {
            "text": "Probing the server.",
            "tool_calls": [{"id": "call_probe_1", "name": "probe", "arguments": "{}", "chunk_chars": 1}],
        },
        {"text": "The probe answered natively."},
    ])
    prepare_home(home, model, AGENT)
    models = home / "config" / "models.yaml"
    models.write_text(models.read_text() + "    tool_calls: native\n")
    app = App(home, "native_tools")
    try:
        app.pick_agent("tester")
        app.send("Probe the server")
        app.wait(lambda d: app.js(
            "const d = document.querySelector('[data-testid=permission-dialog]'); return !!d && d.open"
        ), "the permission dialog for the native call")
        assert "probe" in app.text_of("permission-dialog")
        app.screenshot("native-permission")
        app.answer_permission("approve")
        app.wait(lambda d: "The probe answered natively." in app.by_testid("timeline").text, "the final answer")
        cards = app.driver.find_elements(By.CSS_SELECTOR, '[data-testid="tool-card-probe"]')
        assert [c.get_attribute("data-status") for c in cards] == ["succeeded"]
        # The answer's text is shown without any call markup; the call is its card.
        assert "Probing the server." in app.by_testid("timeline").text
    finally:
        app.stop()

    with urllib.request.urlopen(f"{model.base_url}/requests", timeout=10) as r:
        requests = [q for q in json.load(r) if q["path"].endswith("/chat/completions")]
    first, second = requests[0]["body"], requests[1]["body"]
    assert [t["function"]["name"] for t in first["tools"]] == ["probe"]
    assert "<tool_instructions>" not in first["messages"][0]["content"]
    [call] = [c for m in second["messages"] if m["role"] == "assistant" for c in m.get("tool_calls", [])]
    assert call["id"] == "call_probe_1" and call["function"]["name"] == "probe"
    [result] = [m for m in second["messages"] if m["role"] == "tool"]
    assert result["tool_call_id"] == "call_probe_1"
    assert "/v1/chat/completions" in result["content"]
