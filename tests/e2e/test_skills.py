"""Agent Skills in the real app: an agent with a skill (a fixture written for other clients,
copied unchanged) loads it, reads one of its references, runs its Python script after the
permission dialog showed the exact command line, and stores the result as an artifact; each
skill call's card names the skill; the Skills page lists the skill with its agents and opens
its SKILL.md and files."""

from __future__ import annotations

import json
import shutil
import urllib.request
from pathlib import Path

from selenium.webdriver.common.by import By

from harness import App, prepare_home

FIXTURES = Path(__file__).resolve().parents[1] / "fixtures" / "skills"

AGENT = """---
name: skilled
description: Uses skills
model: default
skills: [csv-report]
tools:
  create_artifact: auto
max_tool_rounds: 6
---
You are skilled.
"""


def xml_call(tool: str, **params: str) -> str:
    body = "".join(f"<{k}><![CDATA[{v}]]></{k}>" for k, v in params.items())
    return f"<tool_call><name>{tool}</name><params>{body}</params></tool_call>"


def test_a_skill_is_loaded_read_and_its_script_approved_into_an_artifact(home, scripted_model):
    model = scripted_model([
        {"text": xml_call("load_skill", skill="csv-report")},
        {"text": xml_call("read_skill_file", skill="csv-report", path="references/format.md")},
        {"text": xml_call("run_skill_script", skill="csv-report", script="scripts/summarize.py", args="data/sales.csv")},
        {"text": xml_call("create_artifact", id="report", title="Sales report",
                          content="Sales report\nnorth: 30\nsouth: 12\ntotal: 42")},
        {"text": "The report is in the artifact report."},
    ])
    prepare_home(home, model, AGENT)
    (home / "config" / "agents" / "tester.md").rename(home / "config" / "agents" / "skilled.md")
    shutil.copytree(FIXTURES / "csv-report", home / "config" / "skills" / "csv-report")
    app = App(home, "skills")
    try:
        app.pick_agent("skilled")
        app.send("Total these sales")
        app.wait(lambda d: app.js(
            "const d = document.querySelector('[data-testid=permission-dialog]'); return !!d && d.open"
        ), "the permission dialog for the script")
        assert app.text_of("permission-script") == "python3 scripts/summarize.py data/sales.csv"
        body = app.text_of("permission-body")
        assert "skills/csv-report" in body and "no app secrets" in body
        app.screenshot("skill-script-permission")
        app.answer_permission("approve")
        app.wait(lambda d: "The report is in the artifact report." in app.by_testid("timeline").text,
                 "the final answer")
        for tool, says in [
            ("load_skill", "Loads the skill csv-report"),
            ("read_skill_file", "Reads a file of the skill csv-report: references/format.md"),
            ("run_skill_script", "Runs a script of the skill csv-report: scripts/summarize.py"),
        ]:
            card = app.driver.find_element(By.CSS_SELECTOR, f'[data-testid="tool-card-{tool}"]')
            assert card.get_attribute("data-status") == "succeeded", tool
            assert says in card.find_element(By.CSS_SELECTOR, '[data-testid="tool-skill"]').text
        report = app.cli("artifacts", "show", "report")
        assert report.returncode == 0 and "total: 42" in report.stdout, report.stderr

        # The Skills page: the skill, where it comes from, the agents that get it, its files.
        app.by_testid("nav-skills").click()
        app.wait(lambda d: app.heading() == "Skills", "the Skills page")
        row = app.by_testid("skill-csv-report")
        app.wait(lambda d: "Used by lead_agent, skilled." in row.text, "the skill's agents")
        row.find_element(By.XPATH, ".//button[text()='csv-report']").click()
        app.wait(lambda d: "CSV sales report" in app.text_of("skill-details"), "the rendered SKILL.md")
        app.driver.find_element(By.XPATH, "//button[text()='references/format.md']").click()
        app.wait(lambda d: "Report layout" in app.text_of("skill-file"), "the reference's text")
        app.screenshot("skills-page")
    finally:
        app.stop()

    with urllib.request.urlopen(f"{model.base_url}/requests", timeout=10) as r:
        requests = [q for q in json.load(r) if q["path"].endswith("/chat/completions")]
    system = requests[0]["body"]["messages"][0]["content"]
    assert "- csv-report: Summarise a CSV file of sales" in system
    assert "summarize.py" not in system, "instructions only after load_skill"
    ran = json.dumps(requests[3]["body"]["messages"])
    assert "exited with code 0" in ran and "total: 42" in ran
