"""The runtime for processors without AVX2 (`artifactflow-runtime-compat`, built by
`scripts/stage-runtime.sh debug --compat`), run on such a processor: `qemu-x86_64 -cpu Westmere`
(Intel's 2010 cores: SSE 4.2, no AVX, AVX2, FMA, F16C or BMI2), with SmolLM2-135M.

- the main runtime dies there of an illegal instruction (so the emulated processor really lacks
  what it needs, and the next two tests can fail);
- the compatible runtime loads there and answers;
- the CLI run there chooses the compatible runtime by itself: with only that runtime beside it,
  a local model's run answers under the emulator, and fails natively (where the main one is
  wanted) with the message that names what is missing.

Run by scripts/test.sh with SMALL_MODEL_GGUF, ARTIFACTFLOW_CLI, ARTIFACTFLOW_MAIN_RUNTIME and
ARTIFACTFLOW_COMPAT_RUNTIME set; every one is required.
"""

import http.client
import json
import os
import shutil
import signal
import subprocess
import sys
from pathlib import Path



sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "small_model"))
from shared import runtime_env, runtime_key  # noqa: E402

EMULATOR = ["qemu-x86_64", "-cpu", "Westmere"]
TIMEOUT_S = 600


def required(name: str) -> str:
    value = os.environ.get(name)
    assert value and Path(value).is_file(), f"{name} must name a file (scripts/test.sh sets it)"
    return value


def serve_and_ask(command: list[str]) -> tuple[subprocess.Popen, dict, tuple[int, dict] | None]:
    key = runtime_key()
    proc = subprocess.Popen(
        [*command, "--model", required("SMALL_MODEL_GGUF"), "--ctx", "512", "--threads", "2"],
        stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
        env=runtime_env(key))
    line = proc.stdout.readline()
    if not line:
        return proc, {}, None
    ready = json.loads(line)
    connection = http.client.HTTPConnection("127.0.0.1", ready["port"], timeout=TIMEOUT_S)
    connection.request("POST", "/v1/chat/completions", json.dumps({
        "messages": [{"role": "user", "content": "Say hi."}], "max_tokens": 4, "temperature": 0}),
        {"authorization": f"Bearer {key}", "content-type": "application/json"})
    answer = connection.getresponse()
    return proc, ready, (answer.status, json.loads(answer.read()))


def test_the_main_runtime_cannot_run_on_a_processor_without_avx2():
    proc, ready, answer = serve_and_ask([*EMULATOR, required("ARTIFACTFLOW_MAIN_RUNTIME")])
    try:
        proc.wait(TIMEOUT_S)
        # qemu reports the guest's SIGILL as its own signal death.
        assert proc.returncode in (-signal.SIGILL, 128 + signal.SIGILL) or "Illegal instruction" in proc.stderr.read(), \
            (proc.returncode, ready, answer)
    finally:
        proc.kill()


def test_the_compatible_runtime_answers_on_a_processor_without_avx2():
    proc, ready, answer = serve_and_ask([*EMULATOR, required("ARTIFACTFLOW_COMPAT_RUNTIME")])
    try:
        assert ready.get("ready"), (ready, proc.stderr.read() if proc.poll() is not None else "")
        status, body = answer
        assert status == 200 and body["choices"][0]["message"]["content"], body
        assert proc.poll() is None, "the compatible runtime is still running"
    finally:
        proc.stdin.close()
        proc.wait(60)


def test_the_app_chooses_the_compatible_runtime_on_such_a_processor(tmp_path):
    # The CLI with only the compatible runtime beside it (where the app installs both).
    app = tmp_path / "app"
    app.mkdir()
    cli = app / "artifactflow-cli"
    shutil.copy(required("ARTIFACTFLOW_CLI"), cli)
    shutil.copy(required("ARTIFACTFLOW_COMPAT_RUNTIME"), app / "artifactflow-runtime-compat")
    home = tmp_path / "home"
    env = {k: v for k, v in os.environ.items() if k != "ARTIFACTFLOW_RUNTIME"}
    status = subprocess.run([str(cli), "--home", str(home), "status"], capture_output=True, text=True,
                            timeout=TIMEOUT_S, stdin=subprocess.DEVNULL, env=env)
    assert status.returncode == 0, status.stderr
    (home / "data" / "models").mkdir(parents=True, exist_ok=True)
    shutil.copy(required("SMALL_MODEL_GGUF"), home / "data" / "models" / "smollm2.gguf")
    (home / "config" / "agents" / "local-chat.md").write_text(
        "---\nname: local-chat\ndescription: \"A chat on the local model\"\nmodel: local\n---\n\nBe brief.\n")
    (home / "config" / "models.yaml").write_text(
        "profiles:\n  - name: local\n    api: local\n    model: smollm2\n    max_tokens: 8\n"
        "    temperature: 0\n    context_window: 512\n")
    run = [str(cli), "--home", str(home), "run", "--agent", "local-chat", "--yes", "Say hello."]
    # Natively (this processor has AVX2) the main runtime is wanted, and it is not there.
    native = subprocess.run(run, capture_output=True, text=True, timeout=TIMEOUT_S,
                            stdin=subprocess.DEVNULL, env=env)
    assert native.returncode != 0, native
    assert "artifactflow-runtime) is not installed" in native.stderr, native.stderr
    # On a processor without AVX2 the CLI picks the compatible runtime, which answers.
    emulated = subprocess.run([*EMULATOR, *run], capture_output=True, text=True, timeout=TIMEOUT_S,
                              stdin=subprocess.DEVNULL, env=env)
    assert emulated.returncode == 0, emulated.stdout + emulated.stderr
    assert "[run completed" in emulated.stderr, emulated.stderr
    assert emulated.stdout.strip(), "the model answered something"
