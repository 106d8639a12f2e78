"""The Models screen in the real app against a stand-in Hugging Face Hub (crates/test-support's
`stub-hub`, named by HF_ENDPOINT): the catalogue's recommended model downloads with progress,
pauses, resumes with an HTTP Range request, is listed with what its header says, and is
deleted."""

from __future__ import annotations

import json
import os
import subprocess
import urllib.request
from pathlib import Path

from harness import CLI_BINARY, ROOT, App

STUB_HUB = Path(os.environ.get("ARTIFACTFLOW_STUB_HUB", ROOT / "target/debug/stub-hub"))
SIZE = 3_000_000


def catalog_first(home: Path) -> dict:
    """The catalogue's first entry, as the CLI lists it."""
    out = subprocess.run(
        [str(CLI_BINARY), "--home", str(home), "models", "catalog", "--json"],
        capture_output=True, text=True, timeout=60,
    )
    assert out.returncode == 0, out.stderr
    return json.loads(out.stdout)["items"][0]


def text_of(app: App, selector: str) -> str:
    return app.js("const e = document.querySelector(arguments[0]); return e ? e.textContent : ''", selector)


def test_download_pause_resume_and_delete_a_model(home: Path, tmp_path: Path):
    assert STUB_HUB.is_file(), f"{STUB_HUB} is missing: cargo build -p artifactflow-test-support --bin stub-hub"
    entry = catalog_first(tmp_path / "cli-home")
    # About 6 s for the whole file: the pause lands in the middle.
    hub = subprocess.Popen(
        [str(STUB_HUB), "--tiny", f"{entry['repo']}/{entry['file']}={SIZE}", "--rate", "500000"],
        stdout=subprocess.PIPE, text=True,
    )
    try:
        line = hub.stdout.readline().strip()
        assert line.startswith("LISTENING "), line
        base = line.split(" ", 1)[1]
        app = App(home, "models", {"HF_ENDPOINT": base})
        try:
            app.by_testid("nav-models").click()
            app.wait(lambda d: app.heading() == "Models", "the Models screen")
            app.by_testid("no-models")
            card = app.by_testid(f"catalog-{entry['id']}")
            assert entry["name"] in card.text
            card.find_element("xpath", f".//button[@aria-label='Download {entry['name']}']").click()

            row = f"[data-testid='download-{entry['file']}']"
            app.wait(lambda d: "%" in text_of(app, row) and " of " in text_of(app, row), "the download's progress")
            app.screenshot("models-downloading")
            app.driver.find_element("css selector", f"{row} button").click()  # Pause
            app.wait(lambda d: "Paused at" in text_of(app, row), "the download to pause")
            paused_text = text_of(app, row)
            assert "Resume" in paused_text and "Discard" in paused_text, paused_text

            # Faster now; Resume continues from the part on disk.
            urllib.request.urlopen(urllib.request.Request(
                f"{base}/_behaviour", data=b"{}", headers={"content-type": "application/json"}), timeout=10)
            app.driver.find_element("xpath", f"//li[@data-testid='download-{entry['file']}']//button[text()='Resume']").click()
            name = entry["file"].removesuffix(".gguf")
            app.wait(lambda d: app.js(f"return !!document.querySelector(\"[data-testid='model-{name}']\")"),
                     "the model to be installed")
            # The installed list and the downloads list follow different events: the row goes
            # once the download's end reaches it (a row that stayed would time out here).
            app.wait(lambda d: text_of(app, row) == "", "the finished download's row to go")
            listed = text_of(app, f"[data-testid='model-{name}']")
            assert "qwen3" in listed and "4096" in listed.replace(",", ""), listed
            app.screenshot("models-installed")

            with urllib.request.urlopen(f"{base}/_requests", timeout=10) as answer:
                requests = json.load(answer)
            ranges = [r["range"] for r in requests if r["method"] == "GET" and "/resolve/" in r["path"]]
            assert ranges[0] is None and ranges[-1] is not None and ranges[-1].startswith("bytes="), ranges
            assert (home / "data" / "models" / entry["file"]).stat().st_size > SIZE

            # Delete, after confirming.
            app.driver.find_element("xpath", f"//button[@aria-label='Delete {name}']").click()
            app.driver.find_element("xpath", "//button[text()='Delete']").click()
            app.by_testid("no-models")
            assert not (home / "data" / "models" / entry["file"]).exists()
        finally:
            app.stop()
    finally:
        hub.kill()
        hub.wait(10)
