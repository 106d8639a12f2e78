"""Rendered answers through the real app: a long streamed answer's code blocks are highlighted
(token colours that differ from the code's text colour), its table has ruled cells, in the
light and the dark theme; a code block's copy button copies."""

from __future__ import annotations

from selenium.webdriver.common.action_chains import ActionChains
from selenium.webdriver.common.keys import Keys

from harness import App, prepare_home

AGENT = """---
name: tester
description: Test agent
model: default
tools:
  create_artifact: auto
max_tool_rounds: 1
---
You are the tester.
"""

LANGS = ["python", "rust", "javascript", "go", "bash", "sql"]


def answer() -> str:
    parts = ["Here is the plan.", "", "| Step | Language | Lines |", "|:-----|:--------:|------:|"]
    parts += [f"| {i + 1} | {lang} | {10 + i} |" for i, lang in enumerate(LANGS)]
    parts.append("")
    for i, lang in enumerate(LANGS * 3):
        parts += [
            f"### Part {i + 1}",
            "",
            f"Part {i + 1} in {lang}, with `inline code` and **bold** text.",
            "",
            f"```{lang}",
            {
                "python": f"def part_{i}():\n    return {i}  # the answer",
                "rust": f"fn part_{i}() -> u32 {{\n    {i} // the answer\n}}",
                "javascript": f"function part{i}() {{\n  return {i}; // the answer\n}}",
                "go": f"func part{i}() int {{\n\treturn {i} // the answer\n}}",
                "bash": f'part_{i}() {{\n  echo "{i}"  # the answer\n}}',
                "sql": f"SELECT {i} AS answer FROM parts WHERE id = 'p{i}';",
            }[lang],
            "```",
            "",
        ]
    parts.append("That is all.")
    return "\n".join(parts)


# Per code block: how many highlight token spans have a colour other than the code's own; per
# table cell: its border.
INSPECT = """
const bubbles = document.querySelectorAll('[data-testid=msg-assistant]');
const md = bubbles[bubbles.length - 1].querySelector('.markdown');
const codes = Array.from(md.querySelectorAll('pre code'));
const blocks = codes.map((code) => {
  const base = getComputedStyle(code).color;
  const spans = Array.from(code.querySelectorAll('span[class^=hljs-]'));
  return {spans: spans.length, coloured: spans.filter((s) => getComputedStyle(s).color !== base).length,
          keyword: (() => { const k = code.querySelector('.hljs-keyword'); return k ? getComputedStyle(k).color : null; })()};
});
const cells = Array.from(md.querySelectorAll('table th, table td')).map((c) => {
  const s = getComputedStyle(c);
  return {width: parseFloat(s.borderTopWidth), style: s.borderTopStyle, left: s.borderLeftStyle, color: s.borderTopColor};
});
return {blocks, cells, buttons: md.querySelectorAll('.code-block button.copy-code').length,
        background: getComputedStyle(document.body).backgroundColor};
"""


def assert_rendered(app: App, theme: str) -> dict:
    seen = app.js(INSPECT)
    blocks = seen["blocks"]
    assert len(blocks) == len(LANGS) * 3, f"{theme}: {len(blocks)} code blocks"
    for i, block in enumerate(blocks):
        assert block["coloured"] > 0, f"{theme}: code block {i} has no coloured tokens: {block}"
    assert seen["buttons"] == len(blocks), f"{theme}: {seen['buttons']} copy buttons"
    cells = seen["cells"]
    assert len(cells) == 3 * (len(LANGS) + 1), f"{theme}: {len(cells)} table cells"
    for cell in cells:
        assert cell["width"] >= 1 and cell["style"] == "solid" and cell["left"] == "solid", f"{theme}: {cell}"
        assert cell["color"] != seen["background"], f"{theme}: a border the colour of the page"
    return seen


def test_long_answer_highlighted_with_ruled_table_in_light_and_dark(home, scripted_model):
    text = answer()
    model = scripted_model([{"text": text, "chunk_chars": 24, "chunk_delay_ms": 2}])
    prepare_home(home, model, AGENT)
    app = App(home, "render_light_dark")
    try:
        app.pick_agent("tester")
        app.send("Plan it")
        app.wait(
            lambda d: app.js(
                "const m = document.querySelectorAll('[data-testid=msg-assistant]');"
                "return m.length > 0 && m[m.length - 1].dataset.streaming === 'false'"
                " && m[m.length - 1].textContent.includes('That is all.')"
            ),
            "the whole answer",
            timeout=60,
        )
        light = assert_rendered(app, "light")
        app.screenshot("long-answer-light")

        # The copy button copies the raw code and says so.
        button = app.driver.find_elements("css selector", "[data-testid=msg-assistant] button.copy-code")[0]
        button.click()
        app.wait(lambda d: button.text in ("Copied", "Copy failed"), "the copy button's answer")
        assert button.text == "Copied", button.text
        # What it copied, pasted into the composer the way a user would (the page may not read
        # the clipboard itself).
        composer = app.by_testid("composer-input")
        composer.click()
        ActionChains(app.driver).key_down(Keys.CONTROL).send_keys("v").key_up(Keys.CONTROL).perform()
        code = "def part_0():\n    return 0  # the answer"
        app.wait(lambda d: composer.get_attribute("value") == code, "the copied code pasted into the composer")
        app.set_value(composer, "")

        app.by_testid("nav-settings").click()
        app.wait(lambda d: app.heading() == "Settings", "the Settings screen")
        app.by_testid("no-always-allowed")
        app.driver.find_element("css selector", "input[name=theme][value=dark]").click()
        app.wait(lambda d: app.js("return document.documentElement.dataset.theme") == "dark", "the dark theme")
        app.by_testid("nav-chat").click()
        app.wait(lambda d: "That is all." in app.by_testid("timeline").text, "the answer again")
        dark = assert_rendered(app, "dark")
        app.screenshot("long-answer-dark")
        assert dark["background"] != light["background"]
        assert dark["blocks"][0]["keyword"] != light["blocks"][0]["keyword"], "keywords keep their light colour"
    finally:
        app.stop()
