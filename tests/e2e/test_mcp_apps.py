"""MCP Apps in the real app: a server built on the extension's own helpers
(tests/mcp/apps-server.mjs) shows its view in the tool card; the view's button calls a tool of
its server through the gate, the permission dialog names the view, an approved call updates
the view and a denied one reaches it as an error; the view is drawn again when the
conversation is opened again. And a hostile view (the same server's probe) leaves its frame in
none of the ways it tries: the parent's document, top navigation, a popup, the app's IPC, a
fetch to a stand-in server, resource hints to it (not even a connection), forged bridge
messages. A view refused three times in a row is muted: its calls are refused without a
dialog until the card lets it ask again. A view keeps what it shows while another screen is
shown, and is drawn again with the latest result it drew when its conversation is shown again
or the window reloads."""

from __future__ import annotations

import json
import shutil
import urllib.request

from selenium.webdriver.common.action_chains import ActionChains
from selenium.webdriver.common.by import By
from selenium.webdriver.common.keys import Keys

from harness import ROOT, App, JsonServer, prepare_home

SERVER = ROOT / "tests/mcp/apps-server.mjs"
AGENT = """---
name: tester
description: Test agent
model: default
tools:
  apps.*: auto
max_tool_rounds: 3
---
You are the tester.
"""


def configure(home, log, probe_url: str = "http://127.0.0.1:9/", allowed_url: str = "", other_log=None) -> None:
    """mcp.json with the apps server as `apps` (its calls logged to `log`; its probe view
    fetches `probe_url`, and declares and fetches `allowed_url`), and with `other_log` a second
    instance as `other`."""
    node = shutil.which("node")
    assert node, "node is not on PATH"
    assert (ROOT / "tests/mcp/node_modules/@modelcontextprotocol/ext-apps").is_dir(), (
        "the MCP Apps extension is not installed: run `npm ci --prefix tests/mcp`"
    )
    servers = {
        "apps": {
            "command": node,
            "args": [str(SERVER)],
            "env": {"APPS_SERVER_LOG": str(log), "APPS_PROBE_URL": probe_url, "APPS_ALLOWED_URL": allowed_url},
        }
    }
    if other_log is not None:
        servers["other"] = {"command": node, "args": [str(SERVER)], "env": {"APPS_SERVER_LOG": str(other_log)}}
    (home / "config" / "mcp.json").write_text(json.dumps({"mcpServers": servers}))


def server_calls(log) -> list[dict]:
    if not log.exists():
        return []
    return [json.loads(line) for line in log.read_text().splitlines() if line.strip()]


def in_view(app: App, css: str) -> str:
    """The text of `css` inside the card's view frame ('' while it is not there)."""
    driver = app.driver
    frame = driver.find_elements(By.CSS_SELECTOR, "[data-testid=mcp-view]")
    if not frame:
        return ""
    driver.switch_to.frame(frame[0])
    try:
        found = driver.find_elements(By.CSS_SELECTOR, css)
        return found[0].text if found else ""
    finally:
        driver.switch_to.default_content()


def click_in_view(app: App, css: str) -> None:
    driver = app.driver
    driver.switch_to.frame(app.by_testid("mcp-view"))
    try:
        driver.find_element(By.CSS_SELECTOR, css).click()
    finally:
        driver.switch_to.default_content()


def ask_text(app: App) -> str:
    """What the card asks about the view's request ('' when it asks nothing)."""
    found = app.driver.find_elements(By.CSS_SELECTOR, "[data-testid=mcp-view-ask]")
    return found[0].text if found else ""


def answer_ask(app: App, button: str) -> None:
    """Press the card's ``button`` (yes or no) for the view's question once it is armed."""
    app.wait(
        lambda d: app.js("const a = document.querySelector('[data-testid=mcp-view-ask]'); return !!a && a.dataset.armed === 'true'"),
        "the card's question to arm",
    )
    app.by_testid(f"mcp-view-ask-{button}").click()


def count_connections(server: JsonServer) -> list:
    """The addresses of the TCP connections ``server`` accepts from now on, each as it is
    accepted (a connection opened and never used, as a preconnect leaves it, counts)."""
    accepted: list = []
    take = server.server.get_request

    def get_request():
        connection = take()
        accepted.append(connection[1])
        return connection

    server.server.get_request = get_request
    return accepted


def shortcut(app: App, key: str) -> None:
    """Press Ctrl+``key`` in the app's page (the focus put on the screen's heading first: keys
    pressed in a view's frame are the view's)."""
    app.js("document.getElementById('screen-title')?.focus()")
    ActionChains(app.driver).key_down(Keys.CONTROL).send_keys(key).key_up(Keys.CONTROL).perform()


def dialog_open(app: App) -> bool:
    return app.js("const d = document.querySelector('[data-testid=permission-dialog]'); return !!d && d.open")


def test_a_view_renders_and_its_button_calls_its_server_through_the_gate(home, scripted_model):
    model = scripted_model([
        {"text": "<tool_call><name>apps.show_counter</name><params></params></tool_call>"},
        {"text": "There is the counter."},
        {"text": "Asked again."},
    ])
    prepare_home(home, model, AGENT)
    log = home / "apps.log"
    configure(home, log)
    opened = home / "opened.log"
    app = App(home, "mcp_apps", {"ARTIFACTFLOW_TEST_OPENER_LOG": str(opened)})
    try:
        app.wait(lambda d: 'server="apps" status=Ready' in app.log_text(), "the apps server ready")
        app.pick_agent("tester")
        app.send("Show me the counter")
        app.wait(lambda d: in_view(app, "#count") == "0", "the view shows the call's result")
        frame = app.by_testid("mcp-view")
        # Sized to its content: the view reports its height, the frame takes it (120 px before).
        app.wait(lambda d: frame.get_attribute("data-state") == "ready", "the view to have its call")
        app.wait(lambda d: frame.size["height"] != 120, "the frame sized by the view")
        assert 150 < frame.size["height"] < 640, frame.size
        sandbox = frame.get_attribute("sandbox").split()
        assert "allow-scripts" in sandbox
        for kept in ["allow-same-origin", "allow-popups", "allow-top-navigation", "allow-forms", "allow-modals"]:
            assert kept not in sandbox, sandbox
        assert frame.get_attribute("data-server") == "apps"
        assert in_view(app, "#theme") in ("theme: light", "theme: dark"), "the app's theme reaches the view"
        app.screenshot("mcp-app-view")

        # The button: the view calls `increment` (only views may call it); the dialog names the view.
        click_in_view(app, "#increment")
        app.wait(lambda d: dialog_open(app), "the permission dialog")
        assert "Asked by the view of apps" in app.text_of("permission-asker")
        assert "apps.increment" in app.text_of("permission-dialog")
        app.answer_permission("approve")
        app.wait(lambda d: in_view(app, "#count") == "1", "the view shows the new count")
        assert in_view(app, "#status") == "done"

        # Denied: the view gets an error, the server never sees the call.
        click_in_view(app, "#increment")
        app.wait(lambda d: dialog_open(app), "the permission dialog again")
        app.answer_permission("deny")
        app.wait(lambda d: in_view(app, "#status").startswith("error:"), "the view shows the refusal")
        assert "did not allow" in in_view(app, "#status")
        assert in_view(app, "#count") == "1"
        assert [c["tool"] for c in server_calls(log)] == ["show_counter", "increment"]

        # Refused twice more (three in a row): the view is muted. Its next call is refused
        # without a dialog, the view told why, and the card says so.
        for _ in range(2):
            click_in_view(app, "#increment")
            app.wait(lambda d: dialog_open(app), "the permission dialog for the view's call")
            app.answer_permission("deny")
            app.wait(lambda d: "did not allow" in in_view(app, "#status"), "the view shows the refusal")
        app.wait(lambda d: d.find_elements(By.CSS_SELECTOR, "[data-testid=mcp-view-calls-muted]"), "the card to say the view is muted")
        click_in_view(app, "#increment")
        app.wait(lambda d: "blocked after three refusals" in in_view(app, "#status"), "the view told its call was blocked")
        assert not dialog_open(app), "a muted view's call asks nothing"
        assert [c["tool"] for c in server_calls(log)] == ["show_counter", "increment"]
        app.screenshot("mcp-app-muted")
        # Let it ask again: its next call is asked for, and runs once approved.
        app.by_testid("mcp-view-unmute").click()
        app.wait(lambda d: not d.find_elements(By.CSS_SELECTOR, "[data-testid=mcp-view-calls-muted]"), "the card to let the view ask again")
        click_in_view(app, "#increment")
        app.wait(lambda d: dialog_open(app), "the permission dialog once the view may ask again")
        app.answer_permission("approve")
        app.wait(lambda d: in_view(app, "#count") == "2", "the view shows the new count")

        # A link the view wants opened: asked in the card; refused, then allowed.
        click_in_view(app, "#docs")
        app.wait(lambda d: "https://example.com/counter-docs" in ask_text(app), "the card to ask about the link")
        answer_ask(app, "no")
        app.wait(lambda d: in_view(app, "#opened") == "link: refused", "the view told of the refusal")
        assert not opened.exists()
        click_in_view(app, "#docs")
        app.wait(lambda d: ask_text(app) != "", "the card to ask again")
        answer_ask(app, "yes")
        app.wait(lambda d: in_view(app, "#opened") == "link: done", "the view told it opened")
        app.wait(lambda d: opened.is_file() and opened.read_text().strip() != "", "the opener to get the link")
        assert opened.read_text().strip() == "https://example.com/counter-docs"

        # A message the view wants to send: asked in the card, then sent marked as the view's.
        click_in_view(app, "#ask")
        app.wait(lambda d: "What is the counter at now?" in ask_text(app), "the card to ask about the message")
        app.screenshot("mcp-app-asks")
        answer_ask(app, "yes")
        app.wait(lambda d: in_view(app, "#asked") == "message: done", "the view told it was sent")
        app.wait(
            lambda d: any("Sent from the view of apps" in m.text for m in d.find_elements(By.CSS_SELECTOR, "[data-testid=msg-user]")),
            "the message in the conversation, marked as the view's",
        )
        app.wait(lambda d: "Asked again." in app.by_testid("timeline").text, "the agent's answer to it")
        with urllib.request.urlopen(f"{model.base_url}/requests", timeout=10) as r:
            sent = json.loads(r.read())
        tasks = [
            str(m.get("content"))
            for request in sent
            for m in request["body"].get("messages", [])
            if m.get("role") == "user" and "What is the counter at now?" in str(m.get("content"))
        ]
        assert tasks and tasks[-1].startswith("(Sent from the view of apps, with your approval)"), tasks

        # The calls are the conversation's, made by the view.
        conversations = app.cli_json("conversations", "list")
        shown = app.cli("conversations", "show", conversations[0]["id"]).stdout
        assert "view: ui://counter/view of MCP server apps" in shown

    finally:
        app.stop()

    # The app started again, the conversation opened again: the view is drawn again from what
    # the call kept (the count the call returned, not the server's count now).
    app = App(home, "mcp_apps_again")
    try:
        app.wait(lambda d: 'server="apps" status=Ready' in app.log_text(), "the apps server ready again")
        app.by_testid("conversation-item").click()
        app.wait(lambda d: in_view(app, "#count") == "0", "the view drawn again with its call's result")

        # Its server removed from mcp.json: the card says the view is no longer available.
        (home / "config" / "mcp.json").write_text(json.dumps({"mcpServers": {}}))
        app.wait(lambda d: 'server=apps' in app.log_text() and "MCP server removed" in app.log_text(), "the app to drop the server")
        app.by_testid("new-conversation").click()
        app.by_testid("conversation-item").click()
        app.wait(
            lambda d: d.find_elements(By.CSS_SELECTOR, "[data-testid=mcp-view-unavailable]"),
            "the card to say the view is gone",
        )
        assert "apps" in app.text_of("mcp-view-unavailable")
        assert not app.driver.find_elements(By.CSS_SELECTOR, "[data-testid=mcp-view]")
    finally:
        app.stop()


def test_a_hostile_view_stays_in_its_frame(home, scripted_model):
    hits = JsonServer(lambda path, base: {"ok": True})  # what the view must not reach
    reached = count_connections(hits)
    declared = JsonServer(lambda path, base: {"ok": True})  # what its resource declares
    model = scripted_model([
        {"text": "<tool_call><name>apps.show_probe</name><params></params></tool_call>"},
        {"text": "Probed."},
    ])
    prepare_home(home, model, AGENT)
    log = home / "apps.log"
    other_log = home / "other.log"
    configure(home, log, f"{hits.base}/leak", f"{declared.base}/declared", other_log)
    settings_before = (home / "config" / "settings.yaml").read_text() if (home / "config" / "settings.yaml").exists() else None
    app = App(home, "mcp_apps_probe")
    try:
        app.wait(lambda d: 'server="apps" status=Ready' in app.log_text(), "the apps server ready")
        app.wait(lambda d: 'server="other" status=Ready' in app.log_text(), "the other server ready")
        handles = app.driver.window_handles
        url = app.driver.current_url
        app.pick_agent("tester")
        app.send("Probe")
        app.wait(lambda d: in_view(app, "[data-attempt=done]") != "", "the probe to finish")

        def attempt(name: str) -> str:
            return in_view(app, f"[data-attempt={name}]")

        app.screenshot("mcp-app-probe")
        attempts = ["read-parent", "read-top-url", "tauri-internals", "ipc-fetch", "fetch", "popup", "top-navigation"]
        for name in attempts:
            assert "blocked" in attempt(name), f"{name}: {attempt(name)}"
        # The policy is the resource's: its declared origin was reached, nothing else was.
        assert attempt("declared-fetch") == "declared-fetch: achieved sent", attempt("declared-fetch")
        app.wait(lambda d: declared.requests == ["/declared"], "the declared origin to be reached")
        assert hits.requests == [], "the view reached an origin it did not declare"
        # Not even a connection: its resource hints (preconnect, dns-prefetch, prefetch,
        # preload, modulepreload, prerender) to that origin were removed before it was served.
        assert reached == [], f"the view's document opened {len(reached)} connection(s) to an origin it did not declare"
        assert app.driver.window_handles == handles, "no window was opened"
        assert app.driver.current_url == url, "the app's page stayed"
        # Its frame did not go to another page: the probe is still what it shows.
        assert attempt("done") == "done: yes"
        # A command forged to the app's IPC changed nothing.
        after = (home / "config" / "settings.yaml").read_text() if (home / "config" / "settings.yaml").exists() else None
        assert after == settings_before, after
        # The forged call of another server's tool got a refusal, no dialog; neither server saw
        # more than the probe's own call.
        app.wait(lambda d: attempt("forged-call") != "", "the host's answer to the forged call")
        assert "has no tool `other.increment`" in attempt("forged-call"), attempt("forged-call")
        assert not dialog_open(app)
        assert [c["tool"] for c in server_calls(log)] == ["show_probe"]
        assert server_calls(other_log) == []

        # The view sends its own frame to another page: the page is not loaded, and the card
        # closes the frame (anything it loads after the view is not the view).
        click_in_view(app, "#leave")
        app.wait(
            lambda d: d.find_elements(By.CSS_SELECTOR, "[data-testid=mcp-view-unavailable]"),
            "the card to close the frame",
        )
        assert "tried to show another page" in app.text_of("mcp-view-unavailable")
        assert hits.requests == [], hits.requests
        assert reached == [], reached
        assert app.driver.current_url == url
        assert app.by_testid("composer-input").is_displayed(), "the app still works"
    finally:
        app.stop()
        hits.stop()
        declared.stop()


def test_a_view_keeps_what_it_shows_across_screens_conversations_and_a_reload(home, scripted_model):
    """The counter clicked to 1, another screen shown (Ctrl+2) and the chat again (Ctrl+1): the
    view still reads 1, in the same frame, its own page as it was. Another conversation shown
    and this one again, or the window reloaded: the view is drawn again, with the latest result
    it drew (1, what the server is at), and the card says so."""
    model = scripted_model([
        {"text": "<tool_call><name>apps.show_counter</name><params></params></tool_call>"},
        {"text": "There is the counter."},
    ])
    prepare_home(home, model, AGENT)
    log = home / "apps.log"
    configure(home, log)
    app = App(home, "mcp_apps_kept")
    try:
        app.wait(lambda d: 'server="apps" status=Ready' in app.log_text(), "the apps server ready")
        app.pick_agent("tester")
        app.send("Show me the counter")
        app.wait(lambda d: in_view(app, "#count") == "0", "the view shows the call's result")
        click_in_view(app, "#increment")
        app.wait(lambda d: dialog_open(app), "the permission dialog")
        app.answer_permission("approve")
        app.wait(lambda d: in_view(app, "#count") == "1", "the view shows the new count")
        assert server_calls(log)[-1] == {"tool": "increment", "count": 1}
        frame = app.by_testid("mcp-view")

        # Another screen, then the chat again, with their shortcuts.
        shortcut(app, "2")
        app.wait(lambda d: app.heading() == "Agents", "the Agents screen")
        shortcut(app, "1")
        app.wait(lambda d: app.by_testid("composer-input").is_displayed(), "the chat again")
        count = in_view(app, "#count")
        assert count == "1", f"the view reads {count!r} while the server is at 1"
        assert app.by_testid("mcp-view") == frame, "the same frame"
        assert in_view(app, "#status") == "done", "the view's own page as it was"
        assert not app.driver.find_elements(By.CSS_SELECTOR, "[data-testid=mcp-view-redrawn]")

        # Another conversation, then this one again: drawn again, with its latest result.
        app.by_testid("new-conversation").click()
        app.wait(lambda d: not d.find_elements(By.CSS_SELECTOR, "[data-testid=mcp-view]"), "the new conversation")
        app.by_testid("conversation-item").click()
        app.wait(lambda d: in_view(app, "#count") == "1", "the view drawn again with the count it showed")
        assert in_view(app, "#status") == "", "a new page"
        assert "Redrawn with its latest data" in app.text_of("mcp-view-redrawn")
        assert "(increment)" in app.text_of("mcp-view-redrawn")
        app.screenshot("mcp-app-redrawn")

        # The window reloaded: the same.
        app.driver.refresh()
        app.wait(lambda d: not app.splash_shown(), "the reloaded window started")
        app.by_testid("conversation-item").click()
        app.wait(lambda d: in_view(app, "#count") == "1", "the view drawn again after the reload")
        assert "Redrawn with its latest data" in app.text_of("mcp-view-redrawn")
        assert [c["tool"] for c in server_calls(log)] == ["show_counter", "increment"]
    finally:
        app.stop()
