"""Conversation grants through the real app against the scripted model: "Calls like this…" in
the permission dialog saves an edited rule (a host glob and a parameter glob), the next matching
call runs without a dialog, a call the rule does not match asks again, and Settings lists the
grant with what it is bound to."""

from __future__ import annotations

from selenium.webdriver.common.by import By
from selenium.webdriver.common.keys import Keys

from harness import App, prepare_home

AGENT = """---
name: tester
description: Test agent
model: default
tools:
  lookup: confirm
max_tool_rounds: 5
---
You are the tester.
"""


def lookup(q: str) -> str:
    return f"<tool_call><name>lookup</name><params><q><![CDATA[{q}]]></q></params></tool_call>"


def card_status(app: App, index: int) -> str:
    cards = app.driver.find_elements(By.CSS_SELECTOR, '[data-testid="tool-card-lookup"]')
    return cards[index].get_attribute("data-status") if len(cards) > index else ""


def dialog_open(app: App) -> bool:
    return app.js("const d = document.querySelector('[data-testid=permission-dialog]'); return !!d && d.open")


def replace_text(app: App, testid: str, text: str) -> None:
    field = app.by_testid(testid)
    field.send_keys(Keys.CONTROL, "a")
    field.send_keys(Keys.BACKSPACE)
    field.send_keys(text)
    app.wait(lambda d: field.get_attribute("value") == text, f"{testid} to read {text}")


def test_calls_like_this_allows_matching_calls_and_asks_for_others(home, scripted_model):
    model = scripted_model([
        {"text": lookup("docs-one")},
        {"text": lookup("docs-two")},
        {"text": lookup("other")},
        {"text": "Looked up three."},
    ])
    prepare_home(home, model, AGENT)
    (home / "config" / "tools" / "lookup.md").write_text(
        f"---\nname: lookup\npermission: confirm\nendpoint: \"{model.base_url}/requests\"\n"
        "response_extract: \"$[0].path\"\nparameters:\n  - name: q\n    type: string\n---\nLooks up.\n"
    )
    app = App(home, "permission_grants")
    try:
        app.pick_agent("tester")
        app.send("Look things up")
        app.wait(lambda d: dialog_open(app), "the first permission dialog")
        assert '"q": "docs-one"' in app.text_of("permission-dialog")

        # The proposal: the same tool and its host; edited to a host glob and a parameter glob.
        app.by_testid("permission-like-this").click()
        app.by_testid("permission-rule-editor")
        assert app.by_testid("permission-rule-tool").get_attribute("value") == "lookup"
        assert app.by_testid("permission-rule-key-0").get_attribute("value") == "$host"
        assert app.by_testid("permission-rule-pattern-0").get_attribute("value") == "127.0.0.1"
        replace_text(app, "permission-rule-pattern-0", "127.0.0.*")
        app.by_testid("permission-rule-add").click()
        replace_text(app, "permission-rule-key-1", "q")
        replace_text(app, "permission-rule-pattern-1", "docs-*")
        app.screenshot("permission-calls-like-this")
        app.wait(lambda d: app.permission_armed(), "the permission dialog to arm")
        app.by_testid("permission-save-rule").click()
        app.wait(lambda d: card_status(app, 0) == "succeeded", "the approved call's card")

        # docs-two matches the rule: it runs without a dialog; the next dialog is for "other".
        app.wait(lambda d: dialog_open(app), "the dialog for the call the rule does not match")
        assert '"q": "other"' in app.text_of("permission-dialog")
        assert card_status(app, 1) == "succeeded", "the matching call ran without asking"
        app.answer_permission("approve")
        app.wait(lambda d: "Looked up three." in app.by_testid("timeline").text, "the end of the run")
        assert card_status(app, 2) == "succeeded"

        # Settings lists the grant: its conversation, its rule and what it is bound to.
        app.by_testid("nav-settings").click()
        grants = lambda: app.driver.find_elements(By.CSS_SELECTOR, '[data-testid^="grant-"]')  # noqa: E731
        app.wait(lambda d: any("lookup when {$host: 127.0.0.*, q: docs-*}" in g.text for g in grants()),
                 "the grant in Settings")
        [grant] = grants()
        assert "Look things up" in grant.text
        assert "while it goes to 127.0.0.1" in grant.text
    finally:
        app.stop()
