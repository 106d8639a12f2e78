"""Side by side: the app's runtime (`artifactflow-runtime`) and llama-cpp-python's server on the
same model file (SmolLM2-135M by default), the same threads (SMALL_MODEL_THREADS generating;
every core reading a prompt, llama-cpp-python's `n_threads_batch` default and the runtime's) and
the same prompts. Prints a table; fails only when the harness breaks (a server that does not
start or answer).

For each server, three requests, streamed, temperature 0:
1. a ~700-token prompt (system prompt and tools, as an agent's first round) and 64 answer tokens;
2. the same conversation with that answer and one more user message (an agent's next round);
3. the first request's system prompt with a question answered at length: 128 tokens.
Reported, each the median of five runs with the two servers taking turns (the machine may be
busy with other work; taking turns spreads it over both): the runtime's load time (start to its
ready line); prompt processing (prompt tokens / time to first token of request 1); generation
(tokens after the first / time from the first to the last, of request 3: a one-sentence answer
is too few tokens to time); the time to first token of round 2 against round 1 (prefix reuse
keeps it a fraction of round 1's); and the runtime's speeds as a ratio of llama-cpp-python's.

Environment: SMALL_MODEL_GGUF, SMALL_MODEL_BASE_URL (the llama-cpp-python server that
scripts/small_model.sh started, 1 thread), ARTIFACTFLOW_RUNTIME (the runtime binary),
SMALL_MODEL_THREADS (default 1, as the server), ARTIFACTFLOW_CLI (for the grammar of guided
calls; see guidance()), BENCH_RUNS (default 5).
"""

import json
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
import urllib.request

from shared import runtime_env, runtime_headers, runtime_key

SYSTEM = (
    "You are a careful assistant with tools. "
    + " ".join(
        f"Tool {i}: `tool_{i}` takes a parameter `query` (a short text) and returns what it finds "
        f"about that query in source number {i}; use it only when the user asks for it."
        for i in range(24)
    )
)
QUESTION = "In one sentence, what is a lighthouse for?"
FOLLOW_UP = "And who keeps it?"
# Answered at length: generation is timed on this answer.
AT_LENGTH = "Tell me the history of lighthouses, in detail, in at least 300 words."


# The runtime's key, by base URL (llama-cpp-python's server takes none).
KEYS: dict[str, str] = {}


def stream(base_url: str, model: str, messages: list[dict], max_tokens: int,
           extra: dict | None = None) -> dict:
    body = json.dumps({
        "model": model,
        "messages": messages,
        "stream": True,
        "stream_options": {"include_usage": True},
        "temperature": 0,
        "max_tokens": max_tokens,
        "seed": 1234,
        **(extra or {}),
    }).encode()
    headers = runtime_headers(KEYS[base_url]) if base_url in KEYS else {"Content-Type": "application/json"}
    request = urllib.request.Request(f"{base_url}/chat/completions", data=body, headers=headers)
    started = time.monotonic()
    first = last = None
    text, usage, pieces = "", None, 0
    with urllib.request.urlopen(request, timeout=300) as response:
        for raw in response:
            line = raw.decode().strip()
            if not line.startswith("data: ") or line == "data: [DONE]":
                continue
            event = json.loads(line[6:])
            if event.get("usage"):
                usage = event["usage"]
            for choice in event.get("choices", []):
                content = (choice.get("delta") or {}).get("content")
                if content:
                    now = time.monotonic()
                    first = first or now
                    last = now
                    text += content
                    pieces += 1
    if first is None:
        raise SystemExit(f"{base_url}: no text in the answer")
    return {
        "ttft": first - started,
        "gen_time": (last - first) if last else 0.0,
        "text": text,
        "pieces": pieces,
        "prompt_tokens": (usage or {}).get("prompt_tokens"),
        "completion_tokens": (usage or {}).get("completion_tokens") or pieces,
    }


def measure(base_url: str, model: str, run: int) -> dict:
    # A different first line each time: round 1 shares no prefix with anything cached before.
    system = f"Session {run}. {SYSTEM}"
    conversation = [{"role": "system", "content": system}, {"role": "user", "content": QUESTION}]
    one = stream(base_url, model, conversation, 64)
    two = stream(
        base_url,
        model,
        conversation
        + [{"role": "assistant", "content": one["text"]}, {"role": "user", "content": FOLLOW_UP}],
        64,
    )
    long = stream(base_url, model, [conversation[0], {"role": "user", "content": AT_LENGTH}], 128)
    return {"one": one, "two": two, "long": long}


def guidance(base_url: str, cli: str) -> dict:
    """Generation speed with and without guidance, on the runtime: the artifact tools'
    instructions, 96 answer tokens; a task answered in prose with no grammar, and a task that
    needs a call with the call grammar the engine sends (`tools grammar`) turned on from the first
    token, so every token is sampled under it (the worst case: a lazy grammar only runs inside a
    call), and the same with the grammar of native calls (`tools grammar --native`). Best of
    three each, alternating."""
    tools = ["create_artifact", "read_artifact"]
    home = tempfile.mkdtemp(prefix="bench-guidance.")
    try:
        run = lambda *args: subprocess.run([cli, "--home", home, *args], check=True,  # noqa: E731
                                           capture_output=True, text=True).stdout
        grammar = run("tools", "grammar", *tools)
        native_grammar = run("tools", "grammar", "--native", *tools)
        instructions = "\n\n".join(run("tools", "show", t) for t in tools)
    finally:
        shutil.rmtree(home, ignore_errors=True)
    system = {"role": "system", "content": "You are a notes assistant. Use the tools.\n\n" + instructions}
    tasks = {
        # A task the model answers at length in prose (a note to save is answered in a few words).
        "free": [system, {"role": "user", "content": "Describe a gym in detail, in at least 150 words."}],
        "guided": [system, {"role": "user", "content":
                            'Save a note with id "gym", title "Gym", saying: The gym opens at 6 am.'}],
    }
    tasks["native"] = tasks["guided"]
    best = {"free": 0.0, "guided": 0.0, "native": 0.0}
    texts = {}
    for _ in range(3):
        for name, extra in (("free", None), ("guided", {"grammar": grammar}),
                            ("native", {"grammar": native_grammar})):
            one = stream(base_url, "local", tasks[name], 96, extra)
            rate = (one["completion_tokens"] - 1) / one["gen_time"] if one["gen_time"] > 0 else 0.0
            best[name] = max(best[name], rate)
            texts[name] = one["text"]
    return {**best, "texts": texts}


def start_runtime(binary: str, gguf: str, threads: str) -> tuple[subprocess.Popen, str, float]:
    """The runtime, its base URL, and the seconds from its start to its ready line (the load)."""
    key = runtime_key()
    started = time.monotonic()
    proc = subprocess.Popen(
        [binary, "--model", gguf, "--ctx", "4096", "--threads", threads],
        stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True,
        env=runtime_env(key),
    )
    ready = json.loads(proc.stdout.readline() or "{}")
    loaded = time.monotonic() - started
    if not ready.get("ready"):
        raise SystemExit(f"the runtime did not start: {ready}")
    url = f"http://127.0.0.1:{ready['port']}/v1"
    KEYS[url] = key
    return proc, url, loaded


def main() -> int:
    gguf = os.environ["SMALL_MODEL_GGUF"]
    python_server = os.environ["SMALL_MODEL_BASE_URL"]
    runtime = os.environ["ARTIFACTFLOW_RUNTIME"]
    threads = os.environ.get("SMALL_MODEL_THREADS", "1")
    proc, ours, load = start_runtime(runtime, gguf, threads)
    try:
        # Warm both (page cache, first-request setup), then measure each BENCH_RUNS times, taking
        # turns.
        measure(ours, "local", 0)
        measure(python_server, "smollm2", 0)
        results = {"artifactflow-runtime": [], "llama-cpp-python": []}
        for run in range(1, int(os.environ.get("BENCH_RUNS", "5")) + 1):
            results["artifactflow-runtime"].append(measure(ours, "local", run))
            results["llama-cpp-python"].append(measure(python_server, "smollm2", run))
        guided = guidance(ours, os.environ["ARTIFACTFLOW_CLI"])
    finally:
        proc.stdin.close()
        proc.wait(timeout=10)

    def rate(tokens, seconds):
        return tokens / seconds if tokens and seconds > 0 else float("nan")

    runs = len(results["artifactflow-runtime"])
    print(f"local runtime vs llama-cpp-python, {os.path.basename(gguf)}, {threads} generating "
          f"thread(s), {os.cpu_count()} reading the prompt, temperature 0; medians of {runs} runs "
          f"taking turns")
    print(f"{'server':>22} {'prompt tok':>10} {'prompt tok/s':>12} {'gen tok/s':>10} "
          f"{'TTFT r1 ms':>10} {'TTFT r2 ms':>10} {'r2/r1':>6}")
    rows = {}
    # llama-cpp-python's stream carries no usage: its prompt is counted as ours (the same model
    # file, tokenizer and chat template), its answer in pieces of text (a token each).
    prompt_tokens = results["artifactflow-runtime"][0]["one"]["prompt_tokens"]
    for name, measured in results.items():
        row = {
            "prompt": statistics.median(
                rate(m["one"]["prompt_tokens"] or prompt_tokens, m["one"]["ttft"]) for m in measured),
            "gen": statistics.median(
                rate(m["long"]["completion_tokens"] - 1, m["long"]["gen_time"]) for m in measured),
            "gen_tokens": statistics.median(m["long"]["completion_tokens"] for m in measured),
            "r1": statistics.median(m["one"]["ttft"] for m in measured) * 1000,
            "r2": statistics.median(m["two"]["ttft"] for m in measured) * 1000,
        }
        rows[name] = row
        print(f"{name:>22} {prompt_tokens or 0:>10} {row['prompt']:>12.0f} {row['gen']:>10.0f} "
              f"{row['r1']:>10.0f} {row['r2']:>10.0f} {row['r2'] / row['r1']:>6.2f}")
    print(f"the runtime's load (process start to ready, model file in the page cache): {load * 1000:.0f} ms")
    ours_row, theirs = rows["artifactflow-runtime"], rows["llama-cpp-python"]
    print(f"prompt reading {ours_row['prompt'] / theirs['prompt']:.2f}x llama-cpp-python, "
          f"generation {ours_row['gen'] / theirs['gen']:.2f}x llama-cpp-python "
          f"(over {ours_row['gen_tokens']:.0f} answer tokens); goals: both at least 0.90x")
    print(f"round 2's TTFT {ours_row['r2'] / ours_row['r1']:.2f} of round 1's (goal: at most 0.20)")
    for name, what in (("guided", "the call grammar"), ("native", "the native-call grammar")):
        slowdown = 1 - guided[name] / guided["free"] if guided["free"] else float("nan")
        print(f"guided calls ({what} on every token, 96 tokens, best of 3): "
              f"{guided['free']:.0f} tok/s without, {guided[name]:.0f} tok/s with "
              f"({slowdown * 100:+.0f} % slower; goal: at most 10 %)")
    for name, text in guided["texts"].items():
        print(f"  {name}: {text.strip()[:150]!r}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
