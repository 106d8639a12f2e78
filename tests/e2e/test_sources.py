"""The user's own sources through the real app. A 10-page PDF added to the library; the shipped
lead agent (on a scripted model) searches the sources, reads page 7 and answers citing page 7,
which it read, and page 4, which it never read. The answer shows a chip for each — the second
one unverified — and a click on the first opens the source at page 7 with the passage
highlighted. "Add folder…" (the open dialog's seam) adds another folder: the summary says the
PDF was already in the library and names the file that could not be read."""

from __future__ import annotations

import json
import subprocess
from pathlib import Path

from harness import CLI_BINARY, App, prepare_home


def make_pdf(path: Path, title: str, pages: list[list[str]]) -> Path:
    """A PDF whose pages hold `pages`' lines in Helvetica, with `title` in its info."""
    objects: list[bytes] = []

    def add(body: str | bytes) -> int:
        objects.append(body.encode("latin-1") if isinstance(body, str) else body)
        return len(objects)

    font = add("<< /Type /Font /Subtype /Type1 /BaseFont /Helvetica >>")
    pages_id = len(objects) + 1 + 2 * len(pages)
    kids = []
    for lines in pages:
        ops = ["BT", "/F1 12 Tf", "72 720 Td", "14 TL"]
        for line in lines:
            escaped = line.replace("\\", "\\\\").replace("(", "\\(").replace(")", "\\)")
            ops.append(f"({escaped}) Tj T*")
        ops.append("ET")
        stream = "\n".join(ops).encode("latin-1")
        content = add(b"<< /Length %d >>\nstream\n" % len(stream) + stream + b"\nendstream")
        kids.append(
            add(
                f"<< /Type /Page /Parent {pages_id} 0 R /MediaBox [0 0 612 792] "
                f"/Resources << /Font << /F1 {font} 0 R >> >> /Contents {content} 0 R >>"
            )
        )
    assert add(
        f"<< /Type /Pages /Kids [{' '.join(f'{k} 0 R' for k in kids)}] /Count {len(kids)} >>"
    ) == pages_id
    catalog = add(f"<< /Type /Catalog /Pages {pages_id} 0 R >>")
    info = add(f"<< /Title ({title}) >>")
    out = bytearray(b"%PDF-1.4\n")
    offsets = []
    for n, body in enumerate(objects, start=1):
        offsets.append(len(out))
        out += b"%d 0 obj\n" % n + body + b"\nendobj\n"
    xref = len(out)
    out += b"xref\n0 %d\n0000000000 65535 f \n" % (len(objects) + 1)
    for off in offsets:
        out += b"%010d 00000 n \n" % off
    out += (
        b"trailer\n<< /Size %d /Root %d 0 R /Info %d 0 R >>\nstartxref\n%d\n%%%%EOF\n"
        % (len(objects) + 1, catalog, info, xref)
    )
    path.write_bytes(bytes(out))
    return path


def report(folder: Path) -> Path:
    """A 10-page report whose page 7 alone mentions the quokka."""
    folder.mkdir(parents=True, exist_ok=True)
    pages = []
    for page in range(1, 11):
        special = "The quokka was seen near the lake." if page == 7 else "Nothing unusual was seen."
        pages.append([f"Day {page} of the survey began at dawn.", special])
    return make_pdf(folder / "report.pdf", "Field report", pages)


def call(name: str, **params: str) -> str:
    inner = "".join(f"<{k}><![CDATA[{v}]]></{k}>" for k, v in params.items())
    return f"<tool_call><name>{name}</name><params>{inner}</params></tool_call>"


def test_the_lead_agent_cites_page_7_and_the_chip_opens_it(home, scripted_model, tmp_path):
    papers = tmp_path / "papers"
    report(papers)
    # The library as the command line fills it (the same worker and database as the app's).
    seed = subprocess.run(
        [str(CLI_BINARY), "--home", str(home), "library", "add", str(papers), "--json"],
        capture_output=True, text=True, timeout=120,
    )
    assert seed.returncode == 0, seed.stderr
    source = next(f for f in json.loads(seed.stdout)["files"] if f["path"].endswith("report.pdf"))
    sid = source["id"]

    model = scripted_model([
        {"text": "Searching your sources.\n" + call("search_library", query="quokka")},
        {"text": "Reading it.\n" + call("read_artifact", id=sid, page="7")},
        {"text": f"A quokka was seen near the lake [cite: {sid}, p. 7]. "
                 f"Every day began at dawn [cite: {sid}, p. 4]."},
    ])
    prepare_home(home, model, "---\nname: tester\ndescription: unused\nmodel: default\n---\nUnused.\n")
    other = tmp_path / "more"
    other.mkdir()
    (other / "copy.pdf").write_bytes((papers / "report.pdf").read_bytes())
    (other / "mystery.bin").write_bytes(bytes([0, 159, 146, 150, 0, 1, 2, 3, 255, 0]))
    picks = tmp_path / "picks.txt"
    picks.write_text(f"{other}\n")
    app = App(home, "sources", {"ARTIFACTFLOW_TEST_PICK_PATHS": str(picks)})
    try:
        # The lead agent is the chat's default.
        app.send("Where was the quokka seen?")
        chips = "[...document.querySelectorAll('[data-testid=msg-assistant] a[href^=\"#cite-\"]')]"
        app.wait(lambda d: app.js(f"return {chips}.length") == 2, "the answer's citation chips")
        assert app.js(f"return {chips}.map(a => a.textContent)") == [
            "Field report · p. 7",
            "Field report · p. 4 · unverified",
        ]
        assert "[cite:" not in app.js(
            "return [...document.querySelectorAll('[data-testid=msg-assistant]')].at(-1).textContent")
        # The search found page 7 first, with its citation handle.
        found = app.cli_json("conversations", "list")[0]
        shown = app.cli_json("conversations", "show", found["id"])
        calls = [c for m in shown["messages"] for c in m["calls"]]
        assert calls[0]["tool"] == "search_library" and f"[cite: {sid}, p. 7]" in calls[0]["result"]
        assert [c["verified"] for c in shown["messages"][-1]["citations"]] == [True, False]

        app.js(f"{chips}[0].click()")
        viewer = app.by_testid("artifact-viewer")
        app.wait(lambda d: "quokka" in app.text_of("passage-cited"), "the cited passage")
        cited_page = app.js("return document.querySelector('.page-divider.page-cited')?.textContent")
        assert cited_page == "Page 7"
        assert "Field report" in viewer.text
        app.screenshot("citation-opened")
        app.js("document.querySelector('[data-testid=artifact-viewer] .dialog-actions button').click()")

        # Add a folder from the library: the PDF again (already there) and a file no reader takes.
        app.by_testid("nav-artifacts").click()
        app.by_testid("add-folder").click()
        app.wait(lambda d: app.js("return !!document.querySelector('[data-testid=ingest-summary]')"),
                 "the add's summary")
        assert app.text_of("ingest-counts") == "0 added · 1 already in the library · 1 failed"
        assert "mystery.bin" in app.text_of("ingest-failures")
        listed = app.cli_json("library", "list")
        assert [s["id"] for s in listed] == [sid]
    finally:
        app.stop()
