"""The artifact library through the real app: an artifact made and changed in a run is found by
search, its two versions are diffed, it is exported to a file, and its conversation opens; an
HTML artifact renders in a frame where its script does not run. A conversation exports from its
menu with its calls."""

from __future__ import annotations

import json

from harness import App, prepare_home

AGENT = """---
name: tester
description: Test agent
model: default
tools:
  create_artifact: auto
  update_artifact: auto
max_tool_rounds: 6
---
You are the tester.
"""


def wait_for_last_answer(app: App, text: str) -> None:
    app.wait(lambda d: text in app.js(
        "const m = [...document.querySelectorAll('[data-testid=msg-assistant]')]; return m.length ? m.at(-1).textContent : ''"),
        "the run's end")


def call(name: str, **params: str) -> str:
    inner = "".join(f"<{k}><![CDATA[{v}]]></{k}>" for k, v in params.items())
    return f"<tool_call><name>{name}</name><params>{inner}</params></tool_call>"


def test_search_diff_export_and_open_the_conversation(home, scripted_model, tmp_path):
    model = scripted_model([
        {"text": call("create_artifact", id="findings", title="Penguin findings",
                      content="# Findings\nEmperor penguins huddle.\nOld conclusion.\n")},
        {"text": call("update_artifact", id="findings", old_str="Old conclusion.", new_str="New conclusion: they rotate.")},
        {"text": call("create_artifact", id="page", title="Page", content_type="text/html",
                      content="<h1>Rendered page</h1><script>parent.document.title = 'hacked'</script>")},
        {"text": "Done."},
    ])
    prepare_home(home, model, AGENT)
    export_to = tmp_path / "exported" / "findings.md"
    export_to.parent.mkdir()
    app = App(home, "library", {"ARTIFACTFLOW_TEST_SAVE_PATH": str(export_to)})
    try:
        app.pick_agent("tester")
        app.send("Research penguins")
        wait_for_last_answer(app, "Done.")

        app.by_testid("nav-artifacts").click()
        app.by_testid("artifact-search").send_keys("rotate")
        app.wait(lambda d: app.text_of("artifact-count") == "1 artifact", "the search result")
        app.by_testid("artifact-item").click()
        app.wait(lambda d: "they rotate" in app.text_of("artifact-content"), "the latest version")
        # Two versions, diffed.
        app.by_testid("history-tab").click()
        app.wait(lambda d: "- Old conclusion." in app.js(
            "const d = document.querySelector('[data-testid=diff]'); return d ? d.textContent : ''"), "the diff")
        diff = app.js("return document.querySelector('[data-testid=diff]').textContent")
        assert "+ New conclusion: they rotate." in diff and "  Emperor penguins huddle." in diff, diff
        app.screenshot("library-diff")
        # Exported to the file the save dialog answered.
        app.by_testid("export-artifact").click()
        app.wait(lambda d: export_to.is_file(), "the exported file")
        assert export_to.read_text() == "# Findings\nEmperor penguins huddle.\nNew conclusion: they rotate.\n"
        assert str(export_to) in app.text_of("exported")

        # The HTML artifact renders, and its script does not run.
        search = app.by_testid("artifact-search")
        app.type_text(search, "Rendered")
        app.wait(lambda d: app.text_of("artifact-count") == "1 artifact", "the HTML artifact")
        app.by_testid("artifact-item").click()
        frame = app.by_testid("html-frame")
        app.wait(lambda d: "Rendered page" in (app.js(
            "const f = document.querySelector('[data-testid=html-frame]');"
            "return f && f.contentDocument && f.contentDocument.body ? f.contentDocument.body.textContent : ''") or ""),
            "the rendered HTML")
        assert frame.get_attribute("sandbox") == "allow-same-origin"
        assert app.js("return document.title") != "hacked"

        # Back to the conversation that made it.
        app.by_testid("open-conversation").click()
        app.wait(lambda d: app.heading() == "Research penguins", "the conversation")
        app.wait(lambda d: "Done." in app.js("return document.querySelector('[data-testid=timeline]').textContent"),
                 "the conversation's history")
    finally:
        app.stop()


def test_export_a_conversation_from_its_menu(home, scripted_model, tmp_path):
    """Export in the conversation menu writes the conversation with its calls (status, result)
    to the file the save dialog answered; the CLI shows the same calls."""
    model = scripted_model([
        {"text": "Noting.\n" + call("create_artifact", id="notes", title="Notes", content="# Notes\n")},
        {"text": "Done."},
    ])
    prepare_home(home, model, AGENT)
    export_to = tmp_path / "conversation.json"
    app = App(home, "export_conversation", {"ARTIFACTFLOW_TEST_SAVE_PATH": str(export_to)})
    try:
        app.pick_agent("tester")
        app.send("Take notes")
        wait_for_last_answer(app, "Done.")
        # The row's "…" menu (shown on hover or focus), then its Export item. The list shows
        # the row under its title once the title is saved (on a slow first start, after the
        # answer).
        actions = 'button[aria-label="Actions for Take notes"]'
        app.wait(lambda d: d.find_elements("css selector", actions), "the conversation's row under its title")
        app.js("document.querySelector(arguments[0]).click()", actions)
        export = app.wait(
            lambda d: next((b for b in d.find_elements("css selector", "[role=menuitem]") if b.text == "Export"), None),
            "the row menu's Export item",
        )
        export.click()
        choice = app.by_testid("export-choice")
        next(b for b in choice.find_elements("css selector", "button") if b.text == "JSON").click()
        app.wait(lambda d: export_to.is_file(), "the exported file")
        assert str(export_to) in app.text_of("conversation-exported")
    finally:
        app.stop()
    exported = json.loads(export_to.read_text())
    calls = [c for m in exported["messages"] for c in m["calls"]]
    assert [(c["tool"], c["status"], c["artifact_ids"]) for c in calls] == [
        ("create_artifact", "succeeded", ["notes"])], calls
    assert exported["conversation"]["title"] == "Take notes"
    shown = app.cli_json("conversations", "show", exported["conversation"]["id"])
    assert [c["call_id"] for m in shown["messages"] for c in m["calls"]] == [calls[0]["call_id"]]
