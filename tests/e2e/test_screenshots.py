"""The README's screenshots, made by the real app against the scripted model: chat (light, dark,
a long answer, a tool run), the permission dialog, the artifact library, the HTTP tool editor,
the agent editor's tool picker and the Models screen.

Every run takes them and checks each is a PNG of the window's size. They are written to
docs/screenshots/ only when UPDATE_SCREENSHOTS=1 is set (otherwise to a temporary folder):

    UPDATE_SCREENSHOTS=1 scripts/with-session.sh --display .venv/bin/python -m pytest \\
        tests/e2e/test_screenshots.py -q -p no:cacheprovider

The content is fixed (scripted answers, a local stand-in API), and the home folder has a fixed
path, so a regeneration changes only what the UI changed.
"""

from __future__ import annotations

import os
import shutil
import struct
import subprocess
import tempfile
from pathlib import Path

from selenium.webdriver.common.by import By

from harness import CLI_BINARY, ROOT, App, JsonServer, ScriptedModel

OUT = ROOT / "docs" / "screenshots"
# A fixed home path: the app shows it (status area, the editor's file path).
HOME = Path(tempfile.gettempdir()) / "artifactflow-screenshots" / "home"

AGENT = """---
name: researcher
description: Researches a topic and keeps notes in the library
model: default
tools:
  create_artifact: auto
  field_station: confirm
max_tool_rounds: 5
---
You research topics and write notes.
"""

STATION_TOOL = """---
name: field_station
description: Latest reading from the Antarctic field station
permission: confirm
endpoint: "{base}/station"
response_extract: "$.reading"
---
Returns the field station's latest reading.
"""

NOTES = """# Emperor penguin notes

- Breed in the Antarctic winter, on sea ice.
- Huddles of up to 5,000 birds share warmth, and rotate so each bird gets a turn inside.
- The male keeps the egg on its feet for about 65 days.
"""

WARM_ANSWER = """## How emperor penguins keep warm

Emperor penguins survive **-40 °C** winds with three tricks:

1. **Feathers**: about 100 per square inch, in layers that trap air.
2. **Fat**: up to 3 cm of blubber before the breeding season.
3. **Huddles**: thousands of birds pack together and *rotate*, so no one stays on the edge.

| Trick | Saves | Cost |
|---|---|---|
| Feathers | most heat loss | moulting once a year |
| Fat | energy for 4 months | heavy to carry |
| Huddles | up to 50% of energy | little room to move |

A model of a huddle's rotation:

```python
def rotate(huddle: list[str]) -> list[str]:
    \"\"\"The bird on the windward edge moves to the sheltered side.\"\"\"
    return huddle[1:] + huddle[:1]
```

In short: **insulation outside, a shared furnace inside.**
"""


def long_answer() -> str:
    """A long answer: sections with prose, lists, a table and code blocks (about 200 lines)."""
    parts = ["# Field guide to the emperor penguin colony\n"]
    for i in range(1, 11):
        parts.append(f"## {i}. Survey day {i}\n")
        parts.append(
            f"On day {i} the team counted the huddle at dawn and at dusk. The wind stayed below "
            f"{20 + i} knots, and the birds on the edge changed every few minutes.\n"
        )
        parts.append(f"- Adults counted: {4800 + 13 * i}\n- Chicks seen: {310 + 7 * i}\n- Temperature: -{30 + i} °C\n")
        if i % 2:
            parts.append(
                "```rust\n"
                f"fn huddle_day_{i}(birds: &mut Vec<Bird>) {{\n"
                "    // The windward bird walks to the sheltered side.\n"
                "    let edge = birds.remove(0);\n"
                "    birds.push(edge);\n"
                "}\n"
                "```\n"
            )
        else:
            parts.append(
                "```python\n"
                f"counts[{i}] = {{\"adults\": {4800 + 13 * i}, \"chicks\": {310 + 7 * i}}}\n"
                "print(sum(c[\"adults\"] for c in counts.values()))\n"
                "```\n"
            )
    rows = "".join(f"| {i} | {4800 + 13 * i} | {310 + 7 * i} |\n" for i in range(1, 11))
    parts.append("| Day | Adults | Chicks |\n|---|---|---|\n" + rows)
    parts.append("\n**End of the guide.** The colony grew steadily over the ten days.\n")
    return "\n".join(parts)


def call(name: str, **params: str) -> str:
    inner = "".join(f"<{k}><![CDATA[{v}]]></{k}>" for k, v in params.items())
    return f"<tool_call><name>{name}</name><params>{inner}</params></tool_call>"


def prepare(home: Path, model: ScriptedModel, station: JsonServer) -> None:
    """Seed the home as a first run would, with the scripted model, the agent and its tool."""
    out = subprocess.run([str(CLI_BINARY), "--home", str(home), "status"], capture_output=True, text=True, timeout=60)
    assert out.returncode == 0, out.stderr
    config = home / "config"
    (config / "models.yaml").write_text(
        f'profiles:\n  - name: default\n    api: openai\n    base_url: "{model.base_url}/v1"\n    model: scripted\n'
    )
    (config / "tools" / "field_station.md").write_text(STATION_TOOL.format(base=station.base))
    (config / "agents" / "researcher.md").write_text(AGENT)


def window_geometry(app: App) -> tuple[int, int, int, int]:
    """(x, y, width, height) of the app's shown top-level window on the virtual display."""
    from Xlib import X, display

    pid = app.app_pid()
    d = display.Display()
    try:
        pid_atom = d.intern_atom("_NET_WM_PID")
        for window in d.screen().root.query_tree().children:
            prop = window.get_full_property(pid_atom, X.AnyPropertyType)
            if prop is not None and list(prop.value) == [pid] and window.get_attributes().map_state == X.IsViewable:
                g = window.get_geometry()
                return g.x, g.y, g.width, g.height
    finally:
        d.close()
    raise AssertionError(f"no shown window of process {pid}")


def png_size(path: Path) -> tuple[int, int]:
    """Width and height from a PNG's header (and that it is a PNG at all)."""
    head = path.read_bytes()[:24]
    assert head[:8] == b"\x89PNG\r\n\x1a\n" and head[12:16] == b"IHDR", f"{path} is not a PNG"
    return struct.unpack(">II", head[16:24])


def shoot(app: App, out_dir: Path, name: str) -> Path:
    """Capture the app's window (not the whole display) as out_dir/name.png, made small: a
    256-colour palette (the UI has few colours) and maximum compression."""
    # Let the last frame paint: wait until the browser has run two animation frames.
    app.driver.execute_async_script(
        "const done = arguments[0]; requestAnimationFrame(() => requestAnimationFrame(() => done()))"
    )
    x, y, w, h = window_geometry(app)
    raw = out_dir / f".{name}.raw.png"
    path = out_dir / f"{name}.png"
    subprocess.run(["import", "-window", "root", "-crop", f"{w}x{h}+{x}+{y}", "+repage", str(raw)],
                   check=True, timeout=30, capture_output=True)
    subprocess.run(["convert", str(raw), "-strip", "+dither", "-colors", "256",
                    "-define", "png:compression-level=9", str(path)], check=True, timeout=60, capture_output=True)
    raw.unlink()
    assert path.stat().st_size > 5_000, f"{path} is nearly empty"
    assert png_size(path) == (w, h), f"{path} is {png_size(path)}, the window {w}x{h}"
    return path


def last_answer(app: App) -> str:
    return app.js(
        "const m = [...document.querySelectorAll('[data-testid=msg-assistant]')]; return m.length ? m.at(-1).textContent : ''"
    )


def card_status(app: App, tool: str) -> str:
    cards = app.driver.find_elements(By.CSS_SELECTOR, f'[data-testid="tool-card-{tool}"]')
    return cards[-1].get_attribute("data-status") if cards else ""


def set_theme(app: App, choice: str) -> None:
    """Choose a theme in Settings, and come back to the chat. (The radio is clicked in the page:
    the Settings sections above it load one by one and move it, so a pointer click can miss.)"""
    app.by_testid("nav-settings").click()
    radio = f"//input[@type='radio'][@value='{choice}']"
    app.wait(lambda d: d.find_elements(By.XPATH, radio), f"the {choice} theme choice")
    app.js("arguments[0].click()", app.driver.find_element(By.XPATH, radio))
    app.wait(lambda d: app.js("return document.documentElement.dataset.theme") == choice, f"the {choice} theme")
    app.by_testid("nav-chat").click()


def new_conversation(app: App, text: str) -> None:
    app.by_testid("new-conversation").click()
    app.pick_agent("researcher")
    app.send(text)


def scroll_timeline_to_end(app: App) -> None:
    app.js("const t = document.querySelector('[data-testid=timeline]'); t.scrollTop = t.scrollHeight")
    app.wait(lambda d: app.js(
        "const t = document.querySelector('[data-testid=timeline]'); return t.scrollHeight - t.scrollTop - t.clientHeight < 2"),
        "the timeline scrolled to its end")


def test_screenshots(scripted_model):
    update = os.environ.get("UPDATE_SCREENSHOTS") == "1"
    out_dir = OUT if update else Path(tempfile.mkdtemp(prefix="artifactflow-shots-"))
    out_dir.mkdir(parents=True, exist_ok=True)
    shutil.rmtree(HOME.parent, ignore_errors=True)
    HOME.mkdir(parents=True)
    station = JsonServer(lambda path, base: {"reading": "-31 °C, wind 24 knots, 5,012 adults in the huddle"})
    weather = JsonServer(lambda path, base: {"data": {"temp": 21.5, "unit": "C"}})
    model = scripted_model([
        {"text": "I'll write the notes first.\n" + call("create_artifact", id="penguin-notes", title="Emperor penguin notes", content=NOTES)},
        {"text": "Now the field station's latest reading.\n" + call("field_station")},
        {"text": "Done: the notes are in **Emperor penguin notes**, and the field station reports -31 °C with 5,012 adults huddling."},
        {"text": WARM_ANSWER, "chunk_chars": 40},
        {"text": long_answer(), "chunk_chars": 200},
    ])
    prepare(HOME, model, station)
    app = App(HOME, "screenshots")
    shots = []
    try:
        # A tool run: an automatic tool and one approved in the permission dialog.
        app.pick_agent("researcher")
        app.send("Collect notes on emperor penguins and check the field station")
        app.wait(lambda d: card_status(app, "create_artifact") == "succeeded", "the notes tool's card")
        app.wait(lambda d: app.js(
            "const d = document.querySelector('[data-testid=permission-dialog]'); return !!d && d.open"),
            "the permission dialog")
        app.wait(lambda d: app.permission_armed(), "the permission dialog to arm")
        shots.append(shoot(app, out_dir, "permission-dialog"))
        app.answer_permission("approve")
        app.wait(lambda d: "5,012 adults huddling" in last_answer(app), "the tool run's answer")
        app.wait(lambda d: card_status(app, "field_station") == "succeeded", "the station tool's card")
        shots.append(shoot(app, out_dir, "chat-tool-run"))

        # A Markdown answer (list, table, code), light and dark.
        new_conversation(app, "How do emperor penguins keep warm?")
        app.wait(lambda d: "a shared furnace inside" in last_answer(app), "the Markdown answer")
        set_theme(app, "light")
        app.wait(lambda d: "a shared furnace inside" in last_answer(app), "the answer after the theme change")
        shots.append(shoot(app, out_dir, "chat-light"))
        set_theme(app, "dark")
        app.wait(lambda d: "a shared furnace inside" in last_answer(app), "the answer in the dark theme")
        shots.append(shoot(app, out_dir, "chat-dark"))
        set_theme(app, "light")

        # A long answer, at its end.
        new_conversation(app, "Write a field guide to the colony survey")
        app.wait(lambda d: "End of the guide." in last_answer(app), "the long answer's end")
        scroll_timeline_to_end(app)
        shots.append(shoot(app, out_dir, "chat-long-answer"))

        # The library: a search and the artifact it finds.
        app.by_testid("nav-artifacts").click()
        app.by_testid("artifact-search").send_keys("rotate")
        app.wait(lambda d: app.text_of("artifact-count") == "1 artifact", "the search result")
        app.by_testid("artifact-item").click()
        app.wait(lambda d: "rotate so each bird" in app.text_of("artifact-content"), "the artifact in the viewer")
        shots.append(shoot(app, out_dir, "library"))

        # The HTTP tool editor: a new tool, saved and test-run.
        app.by_testid("nav-tools").click()
        app.by_testid("new-tool").click()
        editor = app.by_testid("tool-editor")
        for testid, text in [("tool-name", "weather_now"), ("tool-description", "Current temperature in a city"),
                             ("tool-endpoint", f"{weather.base}/weather"), ("tool-extract", "$.data.temp")]:
            field = app.by_testid(testid)
            app.type_text(field, text)
        app.set_value(app.by_testid("tool-method"), "GET")
        # A new tool starts clean: one parameter is added.
        editor.find_element(By.XPATH, ".//button[text()='Add parameter']").click()
        app.wait(lambda d: editor.find_elements(By.CSS_SELECTOR, '[aria-label="Parameter 1 name"]'), "the new parameter row")
        for label, text in [("Parameter 1 name", "city"), ("Parameter 1 description", "City name")]:
            field = editor.find_element(By.CSS_SELECTOR, f'[aria-label="{label}"]')
            app.type_text(field, text)
        app.wait(lambda d: app.js("return !!document.querySelector('[data-testid=no-problems]')"), "a valid draft")
        app.by_testid("save-tool").click()
        app.wait(lambda d: "Saved to" in app.text_of("editor-notice"), "the saved notice")
        app.by_testid("test-param-city").send_keys("Oslo")
        app.by_testid("run-test").click()
        app.answer_permission("approve")
        app.wait(lambda d: app.js("return !!document.querySelector('[data-testid=test-output]')"), "the test result")
        assert app.text_of("test-output") == "21.5"
        # From the editor's top (typing in the test panel scrolled the page).
        app.js("document.querySelector('main.content').scrollTop = 0")
        app.wait(lambda d: app.js("return document.querySelector('main.content').scrollTop") == 0, "the editor's top")
        shots.append(shoot(app, out_dir, "editor"))

        # The agent editor's tool picker, the new tool among the HTTP tools.
        app.by_testid("nav-agents").click()
        app.by_testid("agent-researcher").click()
        app.by_testid("edit-agent").click()
        app.by_testid("pick-tools").click()
        app.by_testid("pick-weather_now")
        shots.append(shoot(app, out_dir, "tool-picker"))

        # The Models screen: the catalogue, each entry with its fit here and its tool-use check.
        app.by_testid("tool-picker-done").click()
        app.wait(lambda d: not app.js("return !!document.querySelector('dialog[open]')"), "the tool picker to close")
        app.by_testid("nav-models").click()
        app.wait(lambda d: app.heading() == "Models", "the Models screen")
        app.wait(lambda d: app.js("return document.querySelectorAll('[data-testid^=catalog-]').length") > 3,
                 "the catalogue")
        shots.append(shoot(app, out_dir, "models"))
    finally:
        app.stop()
        station.stop()
        weather.stop()
    assert [p.name for p in shots] == [
        "permission-dialog.png", "chat-tool-run.png", "chat-light.png", "chat-dark.png", "chat-long-answer.png",
        "library.png", "editor.png", "tool-picker.png", "models.png",
    ]
    print(f"screenshots in {out_dir}")
