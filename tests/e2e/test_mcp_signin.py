"""Signing in to a remote MCP server from the real app, against the engine's OAuth stand-in
(crates/test-support, run as the `oauth-stand-in` binary): the server says "needs sign-in",
Sign in opens its authorization page (in E2E builds the opener writes the URL to a log
instead of starting the system browser, see src-tauri/src/seams.rs), the test plays the
browser and follows the stand-in's redirect to the app's loopback listener, and the server
becomes ready with its tool. Sign out forgets the tokens: "needs sign-in" again."""

from __future__ import annotations

import json
import os
import subprocess
import urllib.request
from pathlib import Path

from selenium.webdriver.common.by import By

from harness import ROOT, App, prepare_home

STAND_IN = Path(os.environ.get("ARTIFACTFLOW_OAUTH_STAND_IN", ROOT / "target/debug/oauth-stand-in"))

AGENT = """---
name: tester
description: Test agent
model: default
tools: {}
---
You are the tester.
"""


def status(app: App) -> tuple[str, str]:
    """The `remote` row's status: its state and the badge's text ("", "" before it shows)."""
    return tuple(app.js(
        "const b = document.querySelector('[data-testid=\"mcp-server-remote\"] [data-testid=mcp-status]');"
        "return b ? [b.dataset.state, b.textContent] : ['', '']"
    ))


def test_sign_in_and_out_of_a_remote_server(home, scripted_model, tmp_path: Path):
    assert STAND_IN.is_file(), f"{STAND_IN} is missing: cargo build -p artifactflow-test-support --bin oauth-stand-in"
    stand_in = subprocess.Popen([str(STAND_IN)], stdout=subprocess.PIPE, text=True)
    try:
        line = stand_in.stdout.readline().strip()
        assert line.startswith("LISTENING "), line
        base = line.split(" ", 1)[1]
        prepare_home(home, scripted_model([]), AGENT)
        (home / "config" / "mcp.json").write_text(json.dumps({"mcpServers": {"remote": {"url": f"{base}/mcp"}}}))
        opened = tmp_path / "opened.log"
        app = App(home, "mcp_signin", {
            "ARTIFACTFLOW_TEST_OPENER_LOG": str(opened),
            # Tokens of this scenario only, whatever earlier runs left in the session's keyring.
            "ARTIFACTFLOW_KEYRING_SERVICE": f"artifactflow-e2e-signin-{tmp_path.name}",
        })
        try:
            app.by_testid("nav-tools").click()
            app.wait(lambda d: status(app)[0] == "needs_sign_in", "the server to need sign-in", timeout=60)
            assert status(app)[1] == "needs sign-in"
            row = app.by_testid("mcp-server-remote")
            row.find_element(By.CSS_SELECTOR, "summary").click()
            app.screenshot("mcp-needs-sign-in")

            # Sign in: the app opens the authorization page; the test is the browser.
            app.by_testid("sign-in-remote").click()
            app.wait(lambda d: opened.is_file() and opened.read_text().strip() != "", "the sign-in page to be opened")
            page = opened.read_text().splitlines()[-1]
            assert page.startswith(f"{base}/authorize?"), page
            # The stand-in approves at once and redirects to the app's loopback listener.
            with urllib.request.urlopen(page, timeout=30) as answer:
                assert answer.status == 200
                assert answer.url.startswith("http://127.0.0.1:") and "code=" in answer.url, answer.url
            app.wait(lambda d: status(app)[0] == "ready", "the server to be ready once signed in", timeout=60)
            assert status(app)[1].startswith("ready · 1 tool"), status(app)
            app.wait(lambda d: "Signed in" in app.js(
                "const s = document.querySelector('[data-testid=\"mcp-server-remote\"] [role=status]');"
                "return s ? s.textContent : ''"), "the signed-in notice")
            app.by_testid("mcp-tool-remote.whoami")
            app.screenshot("mcp-signed-in")

            # Sign out (after confirming): the tokens are gone, it needs sign-in again.
            row = app.by_testid("mcp-server-remote")
            row.find_element(By.CSS_SELECTOR, '[aria-label="Sign out of remote"]').click()
            row.find_element(By.XPATH, ".//button[text()='Sign out']").click()
            app.wait(lambda d: status(app)[0] == "needs_sign_in", "the server to need sign-in again", timeout=60)
            assert app.by_testid("sign-in-remote").is_enabled()
        finally:
            app.stop()
    finally:
        stand_in.kill()
        stand_in.wait(10)
