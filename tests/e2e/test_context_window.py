"""Settings shows the context window the profile's server reports, and saves a typed one to
models.yaml (issue 20: every model profile knows its context window)."""

from __future__ import annotations

from pathlib import Path

from selenium.webdriver.common.by import By

from harness import App, ScriptedModel, prepare_home

AGENT = "---\nname: tester\nmodel: default\n---\nYou test.\n"


def test_settings_shows_the_discovered_window_and_saves_a_typed_one(home: Path, tmp_path: Path):
    model = ScriptedModel([], tmp_path, n_ctx=6144)
    prepare_home(home, model, AGENT)
    app = App(home, "context_window")
    try:
        app.by_testid("nav-settings").click()
        app.wait(lambda d: app.heading() == "Settings", "the Settings screen")
        row = app.by_testid("profile-default")
        row.find_element(By.XPATH, ".//button[@aria-label='Edit default']").click()
        form = app.driver.find_element(By.CSS_SELECTOR, "form[aria-labelledby=profile-form-title]")
        form.find_element(By.XPATH, ".//summary[text()='Advanced options']").click()
        field = app.by_testid("context-window-input")
        assert field.get_attribute("value") == ""
        hint = app.by_testid("context-window-hint")
        app.wait(
            lambda d: "6,144 tokens — reported by the server" in hint.text,
            "the window the scripted server reports through /props",
        )
        assert hint.text == (
            "Empty uses 6,144 tokens — reported by the server "
            "(llama.cpp /props default_generation_settings.n_ctx)."
        )
        app.screenshot("context-window-discovered")

        # A window the engine refuses is refused in the form, next to the field.
        app.set_value(field, "100")
        form.find_element(By.XPATH, ".//button[normalize-space(.)='Save changes']").click()
        app.wait(lambda d: field.get_attribute("aria-invalid") == "true", "the field marked invalid")
        assert "at least 512" in form.text
        assert "context_window" not in (home / "config" / "models.yaml").read_text()

        app.set_value(field, "8192")
        form.find_element(By.XPATH, ".//button[normalize-space(.)='Save changes']").click()
        models = home / "config" / "models.yaml"
        app.wait(lambda d: "context_window: 8192" in models.read_text(), "the typed window in models.yaml")
        app.wait(
            lambda d: not d.find_elements(By.CSS_SELECTOR, "form[aria-labelledby=profile-form-title]"),
            "the form closed after saving",
        )
        # Editing again shows the saved value.
        app.by_testid("profile-default").find_element(By.XPATH, ".//button[@aria-label='Edit default']").click()
        app.wait(lambda d: app.by_testid("context-window-input").get_attribute("value") == "8192", "the saved value")
    finally:
        app.stop()
        model.stop()
