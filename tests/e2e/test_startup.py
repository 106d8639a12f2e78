"""A click while the app is still starting meets a splash that says so, never a control that is
about to be replaced; once started, clicks work.

On a fresh machine the settings (which read the OS keyring) answered seconds after the chat
had rendered, and the first-run setup then took the chat's place: a click in between went to a
chat that vanished. The settings are held back here (the `e2e-seams` settings gate,
src-tauri/src/seams.rs) until the test has clicked."""

from __future__ import annotations

from pathlib import Path

from selenium.webdriver.common.action_chains import ActionChains
from selenium.webdriver.common.by import By

from harness import App


def headings(app: App) -> list[str]:
    return app.js("return [...document.querySelectorAll('h1')].map(h => h.textContent.trim())")


def test_a_click_while_starting_meets_the_splash_and_clicks_work_once_started(home: Path):
    gate = home / "settings-gate"
    app = App(home, "startup_splash", {"ARTIFACTFLOW_TEST_SETTINGS_GATE": str(gate)}, wait_started=False)
    try:
        # The UI has rendered (it logged ready) and the chat is under the splash, but the
        # settings have not answered: the app is still starting, and says so.
        app.by_testid("nav-settings")
        assert app.splash_shown()
        splash = app.driver.find_element(By.ID, "splash")
        assert splash.text == "Starting ArtifactFlow…"
        assert splash.get_attribute("role") == "status"
        assert splash.get_attribute("aria-busy") == "true"
        app.screenshot("starting")
        # A click on the sidebar's Settings lands on the splash, and nothing happens.
        on_splash = app.js(
            "const r = document.querySelector('[data-testid=nav-settings]').getBoundingClientRect();"
            "const hit = document.elementFromPoint(r.x + r.width / 2, r.y + r.height / 2);"
            "return !!hit && !!hit.closest('#splash')"
        )
        assert on_splash, "the splash does not cover the sidebar"
        ActionChains(app.driver).move_to_element(app.by_testid("nav-settings")).click().perform()
        assert app.splash_shown()

        # The settings answer: this fresh home has no usable model, so the first-run setup is
        # what stays, and the splash goes.
        gate.write_text("")
        app.wait(lambda d: not app.splash_shown(), "the starting splash to go")
        app.wait(lambda d: headings(app) == ["Welcome to ArtifactFlow"], "the first-run setup")
        # The early click did nothing; a click now works at once.
        app.by_testid("nav-settings").click()
        app.wait(lambda d: headings(app) == ["Settings"], "the Settings screen")
    finally:
        app.stop()
