"""The About dialog in the real app: version from the backend, and "Check for updates" through
the Tauri updater plugin against an update feed served on 127.0.0.1."""

from __future__ import annotations

from harness import App, JsonServer


def feed(version: str) -> JsonServer:
    """A Tauri updater feed (latest.json) on 127.0.0.1 that records its requests."""

    def latest(path: str, base: str) -> dict:
        package = {"url": f"{base}/pkg", "signature": "c2ln"}
        return {
            "version": version,
            "notes": "Faster artifact search",
            "pub_date": "2026-12-01T00:00:00Z",
            "platforms": {
                key: package for key in ("linux-x86_64", "linux-x86_64-deb", "linux-x86_64-rpm")
            },
        }

    return JsonServer(latest)


def test_about_shows_the_version_and_checks_a_feed(app: App):
    server = feed("9.9.9")
    feed_url = f"{server.base}/latest.json"
    try:
        version = app.cli_json("status")["app_version"]
        app.by_testid("about-open").click()
        dialog = app.by_testid("about-dialog")
        app.wait(lambda d: app.text_of("about-version") == version, "the version in About")
        assert "Update checks are off" in app.text_of("update-status"), "off by default"

        url_input = dialog.find_element("css selector", "input[type=url]")
        url_input.send_keys(feed_url)
        dialog.find_element("xpath", ".//button[text()='Save']").click()
        app.wait(lambda d: app.text_of("update-status") == "Saved.", "the feed URL saved")
        settings = (app.home / "config" / "settings.yaml").read_text()
        assert feed_url in settings, settings

        dialog.find_element("xpath", ".//button[text()='Check for updates']").click()
        app.wait(
            lambda d: app.text_of("update-status") == f"Version 9.9.9 is available (you have {version}).",
            "the update the feed announces",
        )
        assert server.requests == ["/latest.json"]
        assert "Faster artifact search" in dialog.text
        app.screenshot("about-update-found")
    finally:
        server.stop()
