"""The app starts to a real shell whose status area shows what the backend reports."""

from __future__ import annotations

import json
import subprocess
import time

from harness import APP_BINARY, App


def test_status_area_shows_what_the_backend_reports(app: App):
    version = app.text_of("status-version")
    # The same facts, from the same engine, through the CLI on the same home folder.
    status = app.cli_json("status")
    assert version == status["app_version"]
    assert app.text_of("status-tools") == str(status["tools_loaded"])
    assert app.text_of("status-agents") == str(status["agents_loaded"]) == "3"
    assert app.by_testid("status-config-dir").get_attribute("title") == status["config_dir"]
    assert app.by_testid("status-database").get_attribute("title") == status["database"]
    # First run seeded the config folder and created the database under the test home.
    assert status["config_dir"] == str(app.home / "config")
    assert (app.home / "config" / "tools" / "_example.md").is_file()
    assert (app.home / "data" / "artifactflow.db").is_file()
    assert list((app.home / "logs").glob("app.*.log")), "the app writes a log file"
    app.screenshot("status")


def headings(app: App) -> list[str]:
    """The text of every level-1 heading shown (one screen at a time shows exactly one)."""
    return app.js("return [...document.querySelectorAll('h1')].map(h => h.textContent.trim())")


def test_navigation_keyboard_and_dark_theme(app: App):
    app.by_testid("status-area")
    # A fresh home has no API key for the default profile: the first-run setup greets the user.
    app.wait(lambda d: app.heading() == "Welcome to ArtifactFlow", "the first-run setup")
    # Wait for its final layout (the form loaded, nothing busy) before clicking.
    app.by_testid("first-run-form")
    app.wait(lambda d: app.by_testid("first-run").get_attribute("aria-busy") == "false", "the loaded setup")
    # Leaving for another screen shows that screen alone (the setup stands in for the chat).
    app.by_testid("nav-tools").click()
    app.wait(lambda d: headings(app) == ["Tools"], "the Tools screen alone")
    app.by_testid("nav-settings").click()
    app.wait(lambda d: headings(app) == ["Settings"], "the Settings screen alone")
    app.by_testid("nav-chat").click()
    app.wait(lambda d: headings(app) == ["Welcome to ArtifactFlow"], "the setup again in the chat's place")
    app.by_testid("first-run-form")
    app.wait(lambda d: app.by_testid("first-run").get_attribute("aria-busy") == "false", "the loaded setup")
    app.driver.find_element("xpath", "//button[starts-with(text(), 'Skip')]").click()
    app.wait(lambda d: app.heading() == "New conversation", "the chat after skipping")
    app.by_testid("nav-tools").click()
    app.wait(lambda d: app.heading() == "Tools", "the Tools screen")
    assert app.by_testid("nav-tools").get_attribute("aria-current") == "page"

    app.js(
        "window.dispatchEvent(new KeyboardEvent('keydown', {key: '7', ctrlKey: true, bubbles: true}))"
    )
    app.wait(lambda d: app.heading() == "Settings", "Ctrl+7 to open Settings")

    # Every section above the theme choice has loaded (no layout shift under the click).
    app.by_testid("profile-default")
    app.by_testid("secret-OPENAI_API_KEY")
    app.by_testid("no-always-allowed")
    app.driver.find_element("css selector", "input[name=theme][value=dark]").click()
    app.wait(lambda d: app.js("return document.documentElement.dataset.theme") == "dark", "dark theme")
    background = app.js("return getComputedStyle(document.body).backgroundColor")
    assert background == "rgb(23, 24, 28)", background
    app.screenshot("settings-dark")


def test_config_problems_are_located_in_the_ui(home):
    bad = home / "config" / "agents" / "broken.md"
    bad.parent.mkdir(parents=True)
    bad.write_text("---\nname: broken\nmax_tool_rounds: lots\n---\nRole.\n")
    app = App(home, "config_problems")
    try:
        assert "1 config file has problems" in app.text_of("status-problems")
        assert app.text_of("status-agents") == "0", "a user's non-empty config folder is not seeded"
        app.by_testid("nav-tools").click()
        errors = app.text_of("config-errors")
        assert f"{bad}:3" in errors and "max_tool_rounds" in errors, errors

        # Fix the file and reload from the UI: the status area follows.
        bad.write_text("---\nname: broken\nmax_tool_rounds: 3\n---\nRole.\n")
        app.driver.find_element("xpath", "//button[text()='Reload config folder']").click()
        app.by_testid("no-config-errors")
        assert app.text_of("status-agents") == "1"
        # Every tool is listed with its source and permission.
        row = app.by_testid("tool-row-web_fetch")
        assert "built-in" in row.text and "confirm" in row.text, row.text
        app.by_testid("tool-row-create_artifact")
    finally:
        app.stop()


def test_a_second_launch_exits_and_leaves_the_first_running(app: App):
    app.by_testid("status-area")
    # The single-instance guard makes the second process hand over and exit (instead of
    # opening a second window on the same database); a hang would hit the timeout.
    second = subprocess.run([str(APP_BINARY)], env=app.env, capture_output=True, timeout=60)
    assert second.returncode == 0, second.stderr
    # The first instance still answers.
    assert app.text_of("status-version")


def test_the_window_remembers_its_size_and_position(home):
    first = App(home, "window_state_1")
    try:
        first.by_testid("status-area")
        first.driver.set_window_rect(x=60, y=40, width=900, height=640)
        rect = first.driver.get_window_rect()
        assert (rect["width"], rect["height"]) == (900, 640), rect
        # The state is saved while the app runs, so it survives even an abrupt end.
        state = home / "xdg-config" / "app.artifactflow.desktop" / ".window-state.json"
        deadline = time.monotonic() + 30
        def saved_width():
            try:
                return json.loads(state.read_text())["main"]["width"]
            except (OSError, ValueError, KeyError):
                return None

        while saved_width() != 900 and time.monotonic() < deadline:
            time.sleep(0.1)
        assert saved_width() == 900, "the window state was saved while running"
    finally:
        first.stop()
    second = App(home, "window_state_2")
    try:
        second.by_testid("status-area")
        rect = second.driver.get_window_rect()
        assert (rect["width"], rect["height"]) == (900, 640), rect
        assert (rect["x"], rect["y"]) == (60, 40), rect
    finally:
        second.stop()
