"""Reusable end-to-end harness: the real built app under tauri-driver + WebKitWebDriver.

A scenario asks for the ``app`` fixture (see conftest.py) and gets an :class:`App`: a running
ArtifactFlow window with its own temporary home folder, a Selenium driver, and helpers to find
elements by ``data-testid``, wait for text, take screenshots and run the CLI on the same home.
"""

from __future__ import annotations

import json
import os
import signal
import socket
import subprocess
import time
import warnings
from pathlib import Path

from selenium import webdriver
from selenium.common.exceptions import WebDriverException
from selenium.webdriver.common.by import By
from selenium.webdriver.common.options import ArgOptions
from selenium.webdriver.remote.client_config import ClientConfig
from selenium.webdriver.remote.remote_connection import RemoteConnection
from selenium.webdriver.remote.webelement import WebElement
from selenium.webdriver.support.ui import WebDriverWait

ROOT = Path(__file__).resolve().parents[2]
APP_BINARY = Path(os.environ.get("ARTIFACTFLOW_APP", ROOT / "target/debug/artifactflow"))
CLI_BINARY = Path(os.environ.get("ARTIFACTFLOW_CLI", ROOT / "target/debug/artifactflow-cli"))
SHOTS = ROOT / ".artifacts" / "e2e"
TIMEOUT = 20.0


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def wait_for_port(port: int, proc: subprocess.Popen, timeout: float = TIMEOUT) -> None:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if proc.poll() is not None:
            raise RuntimeError(f"tauri-driver exited early with code {proc.returncode}")
        try:
            with socket.create_connection(("127.0.0.1", port), timeout=0.5):
                return
        except OSError:
            time.sleep(0.1)
    raise TimeoutError(f"nothing listens on 127.0.0.1:{port} after {timeout}s")


def running_apps() -> list[int]:
    """Process ids of every running copy of the app binary under test."""
    target = APP_BINARY.resolve()
    pids = []
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        try:
            exe = os.readlink(entry / "exe").removesuffix(" (deleted)")
        except OSError:
            continue
        if Path(exe) == target:
            pids.append(int(entry.name))
    return pids


def reap_apps(grace: float = 8.0) -> None:
    """Wait for every app process to end; kill those still there after ``grace`` seconds.

    The single-instance guard is one D-Bus name for the whole session: an app still shutting
    down from the previous scenario would make the next launch hand over and exit, and the
    WebDriver session would never start. (Ending the WebDriver session closes the window the
    way a window manager would; under load, GTK without one sometimes drops that request, and
    the app stays up: see ``request_close``.)"""
    deadline = time.monotonic() + grace
    while running_apps() and time.monotonic() < deadline:
        time.sleep(0.1)
    for pid in running_apps():
        warnings.warn(f"app process {pid} was still running {grace:.0f}s after its scenario ended: killed it")
        try:
            os.kill(pid, signal.SIGKILL)
        except OSError:
            pass
    deadline = time.monotonic() + 5
    while running_apps() and time.monotonic() < deadline:
        time.sleep(0.1)


def app_env(home: Path) -> dict[str, str]:
    """The environment of an app under test: everything under ``home``, nothing in the real profile."""
    env = dict(os.environ)
    env.update(
        ARTIFACTFLOW_HOME=str(home),
        XDG_CONFIG_HOME=str(home / "xdg-config"),
        XDG_DATA_HOME=str(home / "xdg-data"),
        XDG_CACHE_HOME=str(home / "xdg-cache"),
        WEBKIT_DISABLE_COMPOSITING_MODE="1",
    )
    return env


class App:
    """A running app window driven through WebDriver."""

    def __init__(
        self,
        home: Path,
        name: str,
        extra_env: dict[str, str] | None = None,
        wait_started: bool = True,
    ):
        self.home = home
        self.name = name
        self.env = app_env(home)
        self.env.update(extra_env or {})
        reap_apps()
        # The UI logs "UI ready" once it has rendered and asked for the status; a relaunch on
        # the same home adds one more.
        ready_before = self.log_text().count("UI ready")
        port, native_port = free_port(), free_port()
        driver_bin = os.environ.get("TAURI_DRIVER", "tauri-driver")
        self.log = open(home / "tauri-driver.log", "wb")
        self.proc = subprocess.Popen(
            [driver_bin, "--port", str(port), "--native-port", str(native_port)],
            env=self.env,
            stdout=self.log,
            stderr=subprocess.STDOUT,
        )
        try:
            wait_for_port(port, self.proc)
            wait_for_port(native_port, self.proc)
            options = ArgOptions()
            options.set_capability("browserName", "wry")
            options.set_capability("tauri:options", {"application": str(APP_BINARY)})
            # Every WebDriver request gets a deadline, so a stuck driver fails the test instead of hanging CI.
            config = ClientConfig(remote_server_addr=f"http://127.0.0.1:{port}", timeout=60)
            self.driver = webdriver.Remote(
                command_executor=RemoteConnection(client_config=config), options=options
            )
            # A scenario starts once the UI says it is ready: on a first start (new WebKit
            # caches, fonts) the window shows up seconds before that, and a click in between
            # was seen to be lost.
            deadline = time.monotonic() + 2 * TIMEOUT
            while self.log_text().count("UI ready") <= ready_before:
                if time.monotonic() > deadline:
                    raise RuntimeError(f"the app's UI did not report ready within {2 * TIMEOUT:.0f} s")
                time.sleep(0.1)
            if wait_started:
                # The starting splash covers the window (and takes clicks) until the first
                # screen is the one that stays (ui/src/shell/splash.ts).
                self.wait(lambda d: not self.splash_shown(), "the starting splash to go", 2 * TIMEOUT)
        except Exception as e:
            others = running_apps()
            self.stop()
            raise RuntimeError(f"the app's WebDriver session did not start: {e}\n{self.diagnosis(others)}") from e

    def diagnosis(self, apps: list[int]) -> str:
        """What a failed start leaves behind: other app processes and the logs' last lines."""
        lines = [f"app processes running when the session failed: {apps or 'none'}"]
        for pid in apps:
            try:
                environ = Path(f"/proc/{pid}/environ").read_bytes().split(b"\0")
                homes = [v.decode(errors="replace") for v in environ if v.startswith(b"ARTIFACTFLOW_HOME=")]
                lines.append(f"  pid {pid}: {homes}")
            except OSError:
                pass
        logs = [self.home / "tauri-driver.log", *sorted((self.home / "logs").glob("app.*.log"))]
        for log in logs:
            try:
                tail = log.read_text(errors="replace").splitlines()[-25:]
            except OSError:
                continue
            lines.append(f"--- last lines of {log}:")
            lines.extend(tail)
        return "\n".join(lines)

    def splash_shown(self) -> bool:
        """Is the starting splash (ui/index.html's ``#splash``) still in the page?"""
        return bool(self.js("return !!document.getElementById('splash')"))

    # -- finding things -------------------------------------------------------------------
    def by_testid(self, testid: str, timeout: float = TIMEOUT) -> WebElement:
        """Wait for an element with ``data-testid=testid`` and return it."""
        return self.wait(
            lambda d: d.find_element(By.CSS_SELECTOR, f'[data-testid="{testid}"]'),
            f"element [data-testid={testid}]",
            timeout,
        )

    def text_of(self, testid: str) -> str:
        return self.by_testid(testid).text.strip()

    def wait(self, condition, what: str, timeout: float = TIMEOUT):
        try:
            return WebDriverWait(self.driver, timeout, ignored_exceptions=(WebDriverException,)).until(condition)
        except Exception as e:
            shot = self.screenshot("timeout")
            raise AssertionError(f"timed out waiting for {what}; screenshot: {shot}") from e

    def heading(self) -> str:
        # WebKitWebDriver's "element text" comes back empty for the chat header (an overflow
        # quirk of its visibility atom), so read the DOM's own text. The screen's title, not the
        # first h1: the chat stays in the page out of sight, and an answer's `#` heading is one.
        return self.js(
            "const h = document.querySelector('#screen-title, #first-run-title') ?? document.querySelector('h1');"
            " return h ? h.textContent.trim() : ''"
        )

    def set_theme(self, theme: str) -> None:
        """Choose `theme` in Settings (once every section above the choice has loaded, so
        nothing moves under the click) and wait until the page wears it."""
        self.by_testid("nav-settings").click()
        self.wait(lambda d: self.heading() == "Settings", "the Settings screen")
        self.by_testid("profile-default")
        self.by_testid("no-always-allowed")
        self.driver.find_element(By.CSS_SELECTOR, f"input[name=theme][value={theme}]").click()
        self.wait(lambda d: self.js("return document.documentElement.dataset.theme") == theme, f"the {theme} theme")

    def sideways(self, selector: str) -> int:
        """How far the element `selector` can scroll sideways (0 when it cannot, -1 when absent)."""
        return self.js(
            "const el = document.querySelector(arguments[0]);"
            "return el ? el.scrollWidth - el.clientWidth : -1",
            selector,
        )

    def set_value(self, element: WebElement, text: str) -> None:
        """Replace a field's text the way typing would (React sees an input event). WebKitWebDriver
        rejects newlines typed into a textarea, so multi-line text goes in this way."""
        self.js(
            "const el = arguments[0];"
            "const proto = el instanceof HTMLTextAreaElement ? HTMLTextAreaElement.prototype"
            " : el instanceof HTMLSelectElement ? HTMLSelectElement.prototype : HTMLInputElement.prototype;"
            "Object.getOwnPropertyDescriptor(proto, 'value').set.call(el, arguments[1]);"
            "el.dispatchEvent(new Event(el instanceof HTMLSelectElement ? 'change' : 'input', {bubbles: true}));",
            element,
            text,
        )

    def type_text(self, element: WebElement, text: str) -> None:
        """Replace a field's text by typing, and wait until the field shows exactly ``text``.
        WebDriver's clear() sets the value without an input event, so React keeps its old state
        and a re-render in between (a validation arriving) puts the old text back under the typed
        keys ("new_toolweather_now"). Emptying goes through an input event instead, and the typed
        text is checked, not assumed."""
        self.set_value(element, "")
        self.wait(lambda d: element.get_attribute("value") == "", "the field to empty")
        element.send_keys(text)
        self.wait(lambda d: element.get_attribute("value") == text, f"the field to read {text!r}")

    # -- the chat -------------------------------------------------------------------------------
    def pick_agent(self, name: str) -> None:
        """Choose ``name`` in the chat's agent picker once the agents have loaded."""
        picker = self.by_testid("agent-picker")
        self.wait(lambda d: name in picker.text, f"the {name} agent in the picker")
        picker.find_element(By.CSS_SELECTOR, f"option[value={name}]").click()

    def send(self, text: str) -> None:
        """Type a task and send it. (Enter-to-send is covered by the component tests;
        WebKitWebDriver rejects special keys in a textarea, so the Send button a user can also
        click sends here.)"""
        self.by_testid("composer-input").send_keys(text)
        self.by_testid("send").click()

    def permission_armed(self) -> bool:
        """Is the permission dialog open with its approve buttons armed? (They ignore keys and
        clicks for a moment after each request appears, see PermissionDialog.tsx.)"""
        return self.js(
            "const d = document.querySelector('[data-testid=permission-dialog]');"
            "return !!d && d.open && d.dataset.armed === 'true'"
        )

    def answer_permission(self, button: str) -> None:
        """Press the permission dialog's ``button`` (approve, always or deny) once it is armed."""
        self.wait(lambda d: self.permission_armed(), "the permission dialog to arm")
        self.by_testid(f"permission-{button}").click()

    def js(self, script: str, *args):
        return self.driver.execute_script(script, *args)

    # -- the window manager's part ------------------------------------------------------------
    def app_pid(self) -> int:
        """The process id of this scenario's app (one app runs at a time)."""
        pids = running_apps()
        assert len(pids) == 1, f"expected one app process, found {pids}"
        return pids[0]

    def request_close(self) -> None:
        """Ask the app's window to close the way a window manager's close button does
        (a WM_DELETE_WINDOW message), so the app's own close handling runs. Returns once the
        app has logged the request.

        Under Xvfb without a window manager, GTK sometimes drops the message while WebKit's
        automation holds a grab; the message is sent again until the app logs that it arrived
        (the app's handling itself is never retried: it is what the scenario checks)."""
        before = self.log_text().count("close requested")
        for _ in range(15):
            self._send_delete_window()
            deadline = time.monotonic() + 2
            while time.monotonic() < deadline:
                if self.log_text().count("close requested") > before:
                    return
                time.sleep(0.05)
        raise AssertionError("the app never logged the window close request")

    def log_text(self) -> str:
        """The app's log so far."""
        return "".join(f.read_text(errors="replace") for f in sorted((self.home / "logs").glob("app.*.log")))

    def _send_delete_window(self) -> None:
        from Xlib import X, display
        from Xlib.protocol import event

        pid = self.app_pid()
        d = display.Display()
        try:
            pid_atom = d.intern_atom("_NET_WM_PID")
            protocols = d.intern_atom("WM_PROTOCOLS")
            delete = d.intern_atom("WM_DELETE_WINDOW")
            windows = []
            for window in d.screen().root.query_tree().children:
                prop = window.get_full_property(pid_atom, X.AnyPropertyType)
                if (
                    prop is not None
                    and list(prop.value) == [pid]
                    and window.get_attributes().map_state == X.IsViewable
                    and delete in (window.get_wm_protocols() or [])
                ):
                    windows.append(window)
            assert windows, f"no shown top-level window of process {pid} accepts WM_DELETE_WINDOW"
            for window in windows:
                message = event.ClientMessage(window=window, client_type=protocols, data=(32, [delete, X.CurrentTime, 0, 0, 0]))
                window.send_event(message, event_mask=X.NoEventMask)
            d.flush()
        finally:
            d.close()

    def wait_for_exit(self, pid: int, timeout: float = TIMEOUT) -> bool:
        """Whether process ``pid`` ended within ``timeout`` seconds."""
        deadline = time.monotonic() + timeout
        while pid in running_apps() and time.monotonic() < deadline:
            time.sleep(0.1)
        return pid not in running_apps()

    # -- evidence ---------------------------------------------------------------------------
    def screenshot(self, label: str) -> Path:
        """Capture the virtual display. (WebKitWebDriver's own screenshot hangs under Xvfb.)"""
        SHOTS.mkdir(parents=True, exist_ok=True)
        path = SHOTS / f"{self.name}-{label}.png"
        try:
            subprocess.run(["import", "-window", "root", str(path)], timeout=20, capture_output=True)
        except Exception:  # a screenshot must never hide the real failure
            pass
        return path

    # -- the CLI on the same home -------------------------------------------------------------
    def cli(self, *args: str) -> subprocess.CompletedProcess:
        return subprocess.run(
            [str(CLI_BINARY), "--home", str(self.home), *args],
            env=self.env,
            capture_output=True,
            text=True,
            timeout=60,
        )

    def cli_json(self, *args: str):
        out = self.cli(*args, "--json")
        assert out.returncode == 0, out.stderr
        return json.loads(out.stdout)

    def stop(self) -> None:
        driver = getattr(self, "driver", None)
        if driver is not None:
            try:
                driver.quit()
            except Exception:
                pass
        if self.proc.poll() is None:
            self.proc.terminate()
            try:
                self.proc.wait(10)
            except subprocess.TimeoutExpired:
                self.proc.kill()
        self.log.close()
        reap_apps()


MODEL_SERVER = Path(os.environ.get("ARTIFACTFLOW_MODEL_SERVER", ROOT / "target/debug/scripted-model-server"))


class ScriptedModel:
    """The scripted OpenAI-compatible model server (crates/test-support), on 127.0.0.1."""

    def __init__(
        self,
        turns: list[dict],
        workdir: Path,
        n_ctx: int | None = None,
        char_limit: int | None = None,
        condensation_note: str | None = None,
    ):
        """``n_ctx``: the context window its ``GET /props`` reports (llama.cpp's shape);
        ``char_limit``: requests with more prompt characters are refused as too long for the
        model's window; ``condensation_note``: its answer to the engine's condensation requests."""
        script = workdir / "script.json"
        script.write_text(json.dumps(turns))
        options = []
        if n_ctx is not None:
            options += ["--n-ctx", str(n_ctx)]
        if char_limit is not None:
            options += ["--char-limit", str(char_limit)]
        if condensation_note is not None:
            options += ["--condensation-note", condensation_note]
        self.proc = subprocess.Popen(
            [str(MODEL_SERVER), "--script", str(script), "--port", "0", *options],
            stdout=subprocess.PIPE,
            stderr=subprocess.STDOUT,
            text=True,
        )
        line = self.proc.stdout.readline().strip()
        if not line.startswith("LISTENING "):
            self.proc.kill()
            raise RuntimeError(f"scripted-model-server did not start: {line}")
        self.base_url = line.split(" ", 1)[1]

    def stop(self) -> None:
        self.proc.kill()
        self.proc.wait(10)


def prepare_home(home: Path, model: ScriptedModel, agent: str, settings: str = "") -> None:
    """Seed `home` (as a first run would), point the default profile at `model` and add `agent`
    (Markdown with frontmatter) plus a confirm HTTP tool `probe` that GETs the model server."""
    out = subprocess.run([str(CLI_BINARY), "--home", str(home), "status"], capture_output=True, text=True, timeout=60)
    assert out.returncode == 0, out.stderr
    config = home / "config"
    (config / "models.yaml").write_text(
        f'profiles:\n  - name: default\n    api: openai\n    base_url: "{model.base_url}/v1"\n    model: scripted\n'
    )
    (config / "tools" / "probe.md").write_text(
        f"---\nname: probe\npermission: confirm\nendpoint: \"{model.base_url}/requests\"\nresponse_extract: \"$[0].path\"\n---\nProbes the server.\n"
    )
    (config / "agents" / "tester.md").write_text(agent)
    if settings:
        (config / "settings.yaml").write_text(settings)


class JsonServer:
    """A JSON API stand-in on 127.0.0.1: ``respond(path, base_url)`` gives each GET's body.
    Records the paths it was asked for; ``base`` is its URL."""

    def __init__(self, respond):
        import threading
        from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

        self.requests: list[str] = []
        outer = self

        class Handler(BaseHTTPRequestHandler):
            def do_GET(self):  # noqa: N802 (http.server's name)
                outer.requests.append(self.path)
                body = json.dumps(respond(self.path, outer.base)).encode()
                self.send_response(200)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(body)))
                self.end_headers()
                self.wfile.write(body)

            def log_message(self, *args):
                pass

        self.server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.base = f"http://127.0.0.1:{self.server.server_address[1]}"
        threading.Thread(target=self.server.serve_forever, daemon=True).start()

    def stop(self) -> None:
        self.server.shutdown()
        self.server.server_close()
