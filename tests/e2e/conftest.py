"""Fixtures for the end-to-end tests. Run through scripts/test.sh (it builds the app first)."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from harness import APP_BINARY, CLI_BINARY, App


def pytest_sessionstart(session):
    for binary in (APP_BINARY, CLI_BINARY):
        if not binary.is_file():
            raise pytest.UsageError(
                f"{binary} is missing: build it with `ui/node_modules/.bin/tauri build --debug --no-bundle --features e2e-seams` "
                "(scripts/test.sh does this)"
            )


@pytest.fixture
def home(tmp_path: Path) -> Path:
    """A fresh, empty ArtifactFlow home folder for one scenario."""
    h = tmp_path / "home"
    h.mkdir()
    return h


@pytest.fixture
def app(home: Path, request):
    """The real app, started on ``home``; stopped (with a screenshot on failure) afterwards."""
    name = re.sub(r"[^A-Za-z0-9_.-]", "_", request.node.name)
    running = App(home, name)
    yield running
    rep = getattr(request.node, "rep_call", None)
    if rep is not None and rep.failed:
        running.screenshot("failed")
    running.stop()


@pytest.hookimpl(tryfirst=True, hookwrapper=True)
def pytest_runtest_makereport(item, call):
    outcome = yield
    rep = outcome.get_result()
    setattr(item, f"rep_{rep.when}", rep)


@pytest.fixture
def scripted_model(tmp_path: Path):
    """A factory: scripted_model([turns]) starts a scripted model server for this test."""
    from harness import ScriptedModel

    servers = []

    def start(turns):
        server = ScriptedModel(turns, tmp_path)
        servers.append(server)
        return server

    yield start
    for s in servers:
        s.stop()
