"""MCP servers through the real app: paste the configuration of the official
`server-everything` (installed under tests/mcp by scripts/setup.sh), see it start and list its
tools, give one to an agent, let the scripted model call it (the permission dialog shows the
arguments, the tool card the result), then kill the server's process: the status says failed,
and Restart brings it back. And a SIGINT to the app leaves no server process behind."""

from __future__ import annotations

import json
import os
import signal
import time
from pathlib import Path

from selenium.webdriver.common.by import By

from harness import ROOT, App, prepare_home

SERVER_JS = ROOT / "tests/mcp/node_modules/@modelcontextprotocol/server-everything/dist/index.js"

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

ECHO = "<tool_call><name>everything.echo</name><params><message><![CDATA[hello from e2e]]></message></params></tool_call>"
IMAGE = "<tool_call><name>everything.get-tiny-image</name><params></params></tool_call>"


def server_status(app: App) -> tuple[str, str]:
    """The `everything` row's status: its state and the badge's text ("", "" before it shows)."""
    return tuple(app.js(
        "const b = document.querySelector('[data-testid=\"mcp-server-everything\"] [data-testid=mcp-status]');"
        "return b ? [b.dataset.state, b.textContent] : ['', '']"
    ))


def descendants(pid: int) -> list[int]:
    """Every process below ``pid``."""
    children: dict[int, list[int]] = {}
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        try:
            stat = (entry / "stat").read_text()
        except OSError:
            continue
        # The command name (2nd field) may hold spaces: the parent id follows its closing ")".
        ppid = int(stat.rsplit(")", 1)[1].split()[1])
        children.setdefault(ppid, []).append(int(entry.name))
    found, todo = [], [pid]
    while todo:
        for child in children.get(todo.pop(), []):
            found.append(child)
            todo.append(child)
    return found


def server_pids(app: App) -> list[int]:
    """The app's child processes running server-everything."""
    pids = []
    for pid in descendants(app.app_pid()):
        try:
            cmdline = Path(f"/proc/{pid}/cmdline").read_bytes().replace(b"\0", b" ").decode(errors="replace")
        except OSError:
            continue
        if str(SERVER_JS) in cmdline:
            pids.append(pid)
    return pids


def test_paste_call_kill_and_restart_an_mcp_server(home, scripted_model):
    assert SERVER_JS.is_file(), f"{SERVER_JS} is missing: run `npm ci` in tests/mcp (scripts/setup.sh --test does)"
    model = scripted_model([
        {"text": ECHO},
        {"text": IMAGE},
        {"text": "The server echoed it and sent an image."},
    ])
    prepare_home(home, model, AGENT)
    app = App(home, "mcp")
    try:
        # Paste the block other apps use; the server starts in the background.
        app.by_testid("nav-tools").click()
        app.by_testid("add-mcp-server").click()
        config = {"mcpServers": {"everything": {"command": "node", "args": [str(SERVER_JS), "stdio"]}}}
        app.set_value(app.by_testid("mcp-json"), json.dumps(config, indent=2))
        app.by_testid("save-mcp").click()
        app.wait(lambda d: server_status(app)[0] == "ready", "the server to be ready", timeout=60)
        _, badge = server_status(app)
        assert badge.startswith("ready · ") and badge.endswith(" tools"), badge
        assert json.loads((home / "config" / "mcp.json").read_text())["mcpServers"]["everything"]["args"][1] == "stdio"

        # Its tools, with what the model sees.
        row = app.by_testid("mcp-server-everything")
        row.find_element(By.CSS_SELECTOR, "summary").click()
        echo = app.by_testid("mcp-tool-everything.echo")
        echo.find_element(By.CSS_SELECTOR, "summary").click()
        assert '<tool name="everything.echo">' in app.js("return arguments[0].textContent", echo)
        command = app.text_of("mcp-command-path")
        assert command.endswith("/node"), command
        # server-everything (SDK v1) does not know 2026-07-28: the row says which version it speaks.
        assert app.js("return arguments[0].querySelector('[data-testid=mcp-protocol]').textContent", row) == "MCP 2025-11-25"
        assert "an older version" in app.text_of("mcp-protocol-note")
        app.screenshot("mcp-ready")

        # The test panel calls it through the permission dialog.
        echo.find_element(By.CSS_SELECTOR, '[data-testid="test-everything.echo"]').click()
        echo.find_element(By.CSS_SELECTOR, '[data-testid="test-param-message"]').send_keys("from the panel")
        echo.find_element(By.CSS_SELECTOR, '[data-testid="run-test"]').click()
        app.wait(lambda d: app.js("const d = document.querySelector('[data-testid=permission-dialog]'); return !!d && d.open"), "the test's permission dialog")
        assert "Server everything, tool echo" in app.text_of("permission-mcp")
        app.answer_permission("approve")
        app.wait(lambda d: app.js("return !!document.querySelector('[data-testid=test-output]')"), "the test result")
        assert app.text_of("test-output") == "Echo: from the panel"

        # Give the echo tool to the tester agent.
        app.by_testid("nav-agents").click()
        app.by_testid("agent-tester").click()
        app.by_testid("edit-agent").click()
        # Type once the editor has opened the file and checked it, as a person would see it; the
        # edit is in once Save is enabled and the check of the new text is back.
        raw = app.by_testid("agent-raw")
        app.wait(lambda d: "name: tester" in raw.get_attribute("value")
                 and app.js("return !!document.querySelector('[data-testid=no-problems]')"), "the agent file opened")
        edited = AGENT.replace("  create_artifact: auto", "  create_artifact: auto\n  everything.echo: confirm\n  everything.get-tiny-image: auto")
        app.set_value(raw, edited)
        app.wait(lambda d: app.by_testid("save-agent").is_enabled() and "everything.echo" in raw.get_attribute("value")
                 and app.js("return !!document.querySelector('[data-testid=no-problems]')"), "a valid edited agent")
        app.by_testid("save-agent").click()
        app.wait(lambda d: "everything.echo: confirm" in (home / "config" / "agents" / "tester.md").read_text(), "the saved agent")

        # The scripted model calls it; the dialog shows the arguments, the card the text.
        app.by_testid("nav-chat").click()
        app.pick_agent("tester")
        app.send("Echo something")
        app.wait(lambda d: app.js("const d = document.querySelector('[data-testid=permission-dialog]'); return !!d && d.open"), "the permission dialog")
        dialog = app.by_testid("permission-dialog")
        assert "everything.echo" in dialog.text
        assert '"message": "hello from e2e"' in app.js("return arguments[0].textContent", dialog)
        app.screenshot("mcp-permission")
        app.answer_permission("approve")
        card = '[data-testid="tool-card-everything.echo"]'
        app.wait(lambda d: app.js(f"const c = document.querySelector('{card}'); return c ? c.dataset.status : ''") == "succeeded", "the tool card")
        assert "Echo: hello from e2e" in app.js(f"return document.querySelector('{card}').textContent")
        # The image the server returns is stored in the library and shown in its card.
        image = '[data-testid="tool-card-everything.get-tiny-image"] [data-testid="binary-image"]'
        app.wait(lambda d: app.js(f"const i = document.querySelector('{image}'); return !!i && i.complete && i.naturalWidth > 0"), "the image in the tool card")
        app.screenshot("mcp-result")

        # Kill the server's process: the status says failed (the engine restarts a crashed
        # server after a second, so the row's recent status changes keep the failure); Restart
        # starts a new process.
        app.by_testid("nav-tools").click()
        pids = server_pids(app)
        assert pids, "no server-everything process under the app"
        for pid in pids:
            os.kill(pid, signal.SIGKILL)
        history = lambda: app.js(  # noqa: E731
            "const h = document.querySelector('[data-testid=\"mcp-server-everything\"] [data-testid=mcp-history]');"
            "return h ? h.textContent : ''"
        )
        app.wait(lambda d: "failed: the server stopped" in history(), "the failed status")
        row = app.by_testid("mcp-server-everything")
        if row.get_attribute("open") is None:
            row.find_element(By.CSS_SELECTOR, "summary").click()
        row.find_element(By.XPATH, ".//summary[text()='Recent status changes']").click()
        app.screenshot("mcp-failed")
        app.by_testid("restart-everything").click()
        app.wait(lambda d: server_status(app)[0] == "ready" and server_pids(app) and not set(server_pids(app)) & set(pids),
                 "the server to be ready again in a new process", timeout=60)
    finally:
        app.stop()


def alive(pid: int) -> bool:
    """Whether ``pid`` is a live process (a zombie waiting to be reaped has ended)."""
    try:
        stat = Path(f"/proc/{pid}/stat").read_text()
    except OSError:
        return False
    return stat.rsplit(")", 1)[1].split()[0] != "Z"


def test_sigint_to_the_app_ends_every_mcp_server_and_what_it_started(home, scripted_model):
    """A terminal's Ctrl+C (SIGINT) to the app: the app ends its MCP servers' process groups
    (which the signal does not reach: each server runs in a group of its own) before it exits,
    so neither a server nor a process the server started outlives it."""
    assert SERVER_JS.is_file(), f"{SERVER_JS} is missing: run `npm ci` in tests/mcp (scripts/setup.sh --test does)"
    prepare_home(home, scripted_model([{"text": "unused"}]), AGENT)
    # The server starts a long sleep of its own (a grandchild of the app), then becomes
    # server-everything (exec keeps the process).
    config = {"mcpServers": {"everything": {
        "command": "sh",
        "args": ["-c", f'sleep 600 & exec node "{SERVER_JS}" stdio'],
    }}}
    (home / "config" / "mcp.json").write_text(json.dumps(config))
    app = App(home, "mcp-sigint")
    try:
        app.by_testid("nav-tools").click()
        app.wait(lambda d: server_status(app)[0] == "ready", "the server to be ready", timeout=60)
        app_pid = app.app_pid()
        started = descendants(app_pid)
        servers = server_pids(app)
        assert servers, "no server-everything process under the app"
        sleeps = [p for p in started if Path(f"/proc/{p}/cmdline").read_bytes() == b"sleep\x00600\x00"]
        assert sleeps, "the server's own child (sleep 600) is not under the app: " + repr(
            {p: Path(f"/proc/{p}/cmdline").read_bytes() for p in started if Path(f"/proc/{p}").exists()})
        os.kill(app_pid, signal.SIGINT)
        assert app.wait_for_exit(app_pid, timeout=30), "the app did not exit on SIGINT"
        deadline = time.monotonic() + 10
        while any(alive(p) for p in servers + sleeps) and time.monotonic() < deadline:
            time.sleep(0.1)
        left = [p for p in servers + sleeps if alive(p)]
        assert not left, f"processes the app started outlived it: {left}"
    finally:
        app.stop()


def test_a_misspelt_command_fails_once_with_its_reason_and_counts_as_a_problem(home, scripted_model):
    """A server whose command does not exist: its badge says failed, the status area counts it
    as a problem and leads to Tools, whose load problems say why."""
    prepare_home(home, scripted_model([{"text": "unused"}]), AGENT)
    config = {"mcpServers": {"everything": {"command": "npxx-no-such-program", "args": ["-y", "x"]}}}
    (home / "config" / "mcp.json").write_text(json.dumps(config))
    app = App(home, "mcp-misspelt")
    try:
        app.wait(lambda d: "1 MCP server failed" in app.js(
            "const p = document.querySelector('[data-testid=status-mcp-failed]'); return p ? p.textContent : ''"),
            "the status area to count the failed server", timeout=30)
        app.by_testid("status-mcp-failed").find_element(By.TAG_NAME, "button").click()
        app.wait(lambda d: app.heading() == "Tools", "the Tools screen")
        problems = app.by_testid("mcp-problems").text
        assert "MCP server everything failed" in problems and "npxx-no-such-program" in problems, problems
        # Its badge says failed (that it is not retried is the engine's test
        # hub::a_command_that_cannot_run_fails_once_and_is_not_retried).
        assert server_status(app)[0] == "failed"
    finally:
        app.stop()
