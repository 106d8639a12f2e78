"""The About dialog in the real app: version from the backend, and "Check for updates" through
the Tauri updater plugin against an update feed served on 127.0.0.1."""

from __future__ import annotations

import json
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

from harness import App


class Feed:
    """A Tauri updater feed (latest.json) on 127.0.0.1 that records its requests."""

    def __init__(self, version: str):
        self.requests: list[str] = []
        feed = self

        class Handler(BaseHTTPRequestHandler):
            def do_GET(self):  # noqa: N802 (http.server's name)
                feed.requests.append(self.path)
                port = self.server.server_address[1]
                package = {"url": f"http://127.0.0.1:{port}/pkg", "signature": "c2ln"}
                body = json.dumps(
                    {
                        "version": version,
                        "notes": "Faster artifact search",
                        "pub_date": "2026-12-01T00:00:00Z",
                        "platforms": {
                            key: package
                            for key in ("linux-x86_64", "linux-x86_64-deb", "linux-x86_64-rpm")
                        },
                    }
                ).encode()
                self.send_response(200)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(body)))
                self.end_headers()
                self.wfile.write(body)

            def log_message(self, *args):
                pass

        self.server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.url = f"http://127.0.0.1:{self.server.server_address[1]}/latest.json"
        threading.Thread(target=self.server.serve_forever, daemon=True).start()

    def stop(self):
        self.server.shutdown()
        self.server.server_close()


def test_about_shows_the_version_and_checks_a_feed(app: App):
    feed = Feed("9.9.9")
    try:
        version = app.cli_json("status")["app_version"]
        app.by_testid("about-open").click()
        dialog = app.by_testid("about-dialog")
        app.wait(lambda d: app.text_of("about-version") == version, "the version in About")
        assert "Update checks are off" in app.text_of("update-status"), "off by default"

        url_input = dialog.find_element("css selector", "input[type=url]")
        url_input.send_keys(feed.url)
        dialog.find_element("xpath", ".//button[text()='Save']").click()
        app.wait(lambda d: app.text_of("update-status") == "Saved.", "the feed URL saved")
        settings = (app.home / "config" / "settings.yaml").read_text()
        assert feed.url in settings, settings

        dialog.find_element("xpath", ".//button[text()='Check for updates']").click()
        app.wait(
            lambda d: app.text_of("update-status") == f"Version 9.9.9 is available (you have {version}).",
            "the update the feed announces",
        )
        assert feed.requests == ["/latest.json"]
        assert "Faster artifact search" in dialog.text
        app.screenshot("about-update-found")
    finally:
        feed.stop()
