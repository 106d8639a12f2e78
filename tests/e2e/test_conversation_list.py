"""A year of conversations in the real app: 1,000 seeded through the engine
(`seed-conversations`) are listed a page at a time with only the rows in view in the DOM,
grouped by date, found by message text, and loaded further as the list scrolls. (The timing
of the same at 5,000 conversations is measured by bench_conversations.py.)"""

from __future__ import annotations

import subprocess

from bench_conversations import SEEDER, seed_title
from harness import App, prepare_home

AGENT = "---\nname: tester\ndescription: Test agent\nmodel: default\n---\nYou are the tester.\n"


def rows(app: App) -> list[str]:
    return app.js(
        "return [...document.querySelectorAll('[data-testid=conversation-item] .conv-title')]"
        ".map((e) => e.textContent)"
    )


# What the list shows, for a timeout's message: where it is scrolled, what is left, any error.
LIST_STATE = """
const l = document.querySelector('[data-testid=conversation-list]');
const text = (sel) => { const e = document.querySelector(sel); return e ? e.textContent : null; };
return {
  scrollTop: l && l.scrollTop, scrollHeight: l && l.scrollHeight, clientHeight: l && l.clientHeight,
  busy: l && l.getAttribute('aria-busy'), button: text('.conv-more'),
  error: text('[data-testid=conversation-list-error]'),
  rows: document.querySelectorAll('[data-testid=conversation-item]').length,
};
"""


def wait_list(app: App, condition, what: str):
    """`app.wait`, whose timeout also says what state the list was left in."""
    try:
        return app.wait(condition, what)
    except AssertionError as e:
        try:
            state = app.js(LIST_STATE)
        except Exception as unreadable:  # the state must never hide the real failure
            state = f"unreadable ({unreadable})"
        raise AssertionError(f"{e}; the list: {state}") from e


def test_a_thousand_conversations_page_and_search(home, scripted_model):
    prepare_home(home, scripted_model([]), AGENT)
    seeded = subprocess.run(
        [str(SEEDER), "--db", str(home / "data" / "artifactflow.db"), "--count", "1000", "--messages", "4"],
        capture_output=True, text=True, timeout=600,
    )
    assert seeded.returncode == 0, seeded.stderr
    app = App(home, "conversation_list")
    try:
        app.wait(lambda d: len(rows(app)) > 0, "the conversation list")
        shown = rows(app)
        assert shown[0] == seed_title(0), shown[:3]
        assert len(shown) < 60, f"{len(shown)} rows in the DOM for 1,000 conversations"
        groups = app.js(
            "return [...document.querySelectorAll('[data-testid=conversation-group]')].map((e) => e.textContent)"
        )
        assert groups[0] == "Today", groups

        # Scrolling to the end of what is loaded brings the next page (60 rows a page).
        left = "return document.querySelector('.conv-more').textContent"
        assert app.js(left) == "Show more (940 left)"
        app.js("const l = document.querySelector('[data-testid=conversation-list]'); l.scrollTop = l.scrollHeight")
        wait_list(app, lambda d: app.js(left) == "Show more (880 left)", "the second page after scrolling")
        wait_list(app, lambda d: seed_title(61) in rows(app), "the second page's rows in view")
        assert len(rows(app)) < 60

        # Found by a word inside one of its messages (not its title).
        app.set_value(app.by_testid("conversation-search"), "ticket 00777")
        wait_list(app, lambda d: rows(app) == [seed_title(777)], "the one conversation with that text")
        app.screenshot("search")
        app.set_value(app.by_testid("conversation-search"), "")
        wait_list(app, lambda d: rows(app)[:1] == [seed_title(0)], "the whole list again")
    finally:
        app.stop()
