"""Import from OpenAPI in the real app: the Petstore (OpenAPI 3.1) served on 127.0.0.1 is read
from its URL, two operations are picked and saved as HTTP tools (files in the config folder,
tools in the list), a third is opened in the editor for review, and the import's state is still
there on coming back."""

from __future__ import annotations

import json

from selenium.webdriver.common.by import By

from harness import ROOT, App, JsonServer, prepare_home

AGENT = """---
name: tester
description: Test agent
model: default
tools: {}
---
You are the tester.
"""

PETSTORE = json.loads((ROOT / "crates/engine/tests/fixtures/openapi/petstore-3.1.json").read_text())


def test_import_pick_save_and_review(home, scripted_model):
    model = scripted_model([])
    prepare_home(home, model, AGENT)
    spec = JsonServer(lambda path, base: PETSTORE)
    app = App(home, "openapi_import")
    try:
        app.by_testid("nav-tools").click()
        app.by_testid("import-openapi").click()
        app.set_value(app.by_testid("openapi-url"), f"{spec.base}/openapi.json")
        app.by_testid("openapi-read").click()
        app.wait(lambda d: "Swagger Petstore" in app.text_of("openapi-result"), "the description's title")
        assert "3 of 3" in app.text_of("openapi-result")
        assert spec.requests == ["/openapi.json"]

        for name in ["listPets", "showPetById"]:
            row = app.by_testid(f"openapi-row-{name}")
            row.find_element(By.CSS_SELECTOR, "input[type=checkbox]").click()
        app.screenshot("openapi-picked")
        app.by_testid("openapi-save").click()
        app.wait(lambda d: "Saved 2 tools" in app.text_of("openapi-report"), "the save report")
        app.wait(lambda d: app.driver.find_elements(By.CSS_SELECTOR, '[data-testid="tool-row-showPetById"]'),
                 "the saved tool in the list")
        saved = (home / "config" / "tools" / "showPetById.md").read_text()
        assert "/pets/{petId}" in saved and "in: path" in saved, saved
        box = app.by_testid("openapi-row-listPets").find_element(By.CSS_SELECTOR, "input[type=checkbox]")
        assert not box.is_enabled(), "a saved tool cannot be picked again"

        # Review opens the editor on the generated file (unsaved); coming back keeps the import.
        app.by_testid("openapi-review-createPets").click()
        app.wait(lambda d: "createPets" in app.driver.find_element(By.TAG_NAME, "main").text
                 and not app.driver.find_elements(By.CSS_SELECTOR, '[data-testid="openapi-import"]'),
                 "the editor on createPets")
        app.driver.find_element(By.XPATH, "//button[contains(., 'All tools')]").click()
        app.wait(lambda d: "Swagger Petstore" in app.text_of("openapi-result"), "the import kept on return")
        assert not (home / "config" / "tools" / "createPets.md").exists()
    finally:
        app.stop()
        spec.stop()
