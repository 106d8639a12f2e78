"""Shared between the fixtures and the tests of this folder (and the E2E first run, which runs
the notes agent on the model it downloaded). No pytest here: the E2E imports it by path."""

import os
import secrets

# The app's runtime answers only whoever holds the key it was started with (given in this
# variable, never on its command line) and sends it as a bearer token.
RUNTIME_KEY_VARIABLE = "ARTIFACTFLOW_RUNTIME_KEY"


def runtime_key() -> str:
    """A per-launch key, as the app makes one: 256 random bits in hexadecimal."""
    return secrets.token_hex(32)


def runtime_env(key: str, extra: dict | None = None) -> dict:
    """The environment to start the runtime with `key`."""
    return dict(os.environ, **(extra or {}), **{RUNTIME_KEY_VARIABLE: key})


def runtime_headers(key: str) -> dict:
    """The headers of a request to a runtime started with `key`."""
    return {"content-type": "application/json", "authorization": f"Bearer {key}"}

# The agent the tests run.
AGENT = "smol"

# What the model did in this session's runs, for the summary printed at the end.
OBSERVED: dict = {}

# The few-shot role prompt. The engine appends the generated <tool_instructions> for the
# agent's tools after it.
ROLE_PROMPT = """\
You are a notes assistant. You keep the user's notes as artifacts. To use a tool, write a
tool call exactly in this format and nothing else, then wait for the result:

<tool_call>
  <name>TOOL_NAME</name>
  <params>
    <PARAM_NAME><![CDATA[value]]></PARAM_NAME>
  </params>
</tool_call>

When the work is done, answer the user in one or two plain sentences without any tool call.

Example 1
User: Save a note that the team meeting is on Monday at 10.
Assistant:
<tool_call>
  <name>create_artifact</name>
  <params>
    <id><![CDATA[meeting]]></id>
    <title><![CDATA[Team meeting]]></title>
    <content><![CDATA[The team meeting is on Monday at 10.]]></content>
  </params>
</tool_call>
User: <tool_result name="create_artifact" success="true"> created artifact meeting </tool_result>
Assistant: I saved the note as the artifact "meeting".

Example 2
User: What does the artifact "meeting" say?
Assistant:
<tool_call>
  <name>read_artifact</name>
  <params>
    <id><![CDATA[meeting]]></id>
  </params>
</tool_call>
User: <tool_result name="read_artifact" success="true"> 1: The team meeting is on Monday at 10. </tool_result>
Assistant: The note says the team meeting is on Monday at 10.

Example 3
User: What is the capital of France?
Assistant: The capital of France is Paris.
"""

# The same prompt for native tool calls (`tool_calls: native`): the examples write each call as
# the app's runtime reads a native call (JSON inside <tool_call>, as Hermes-style chat templates
# teach), and the tools come in the request, not in the prompt.
NATIVE_ROLE_PROMPT = (
    ROLE_PROMPT
    .replace("""<tool_call>
  <name>TOOL_NAME</name>
  <params>
    <PARAM_NAME><![CDATA[value]]></PARAM_NAME>
  </params>
</tool_call>""", """<tool_call>
{"name": "TOOL_NAME", "arguments": {"PARAM_NAME": "value"}}
</tool_call>""")
    .replace("""<tool_call>
  <name>create_artifact</name>
  <params>
    <id><![CDATA[meeting]]></id>
    <title><![CDATA[Team meeting]]></title>
    <content><![CDATA[The team meeting is on Monday at 10.]]></content>
  </params>
</tool_call>""", """<tool_call>
{"name": "create_artifact", "arguments": {"id": "meeting", "title": "Team meeting", "content": "The team meeting is on Monday at 10."}}
</tool_call>""")
    .replace("""<tool_call>
  <name>read_artifact</name>
  <params>
    <id><![CDATA[meeting]]></id>
  </params>
</tool_call>""", """<tool_call>
{"name": "read_artifact", "arguments": {"id": "meeting"}}
</tool_call>""")
)
assert "<params>" not in NATIVE_ROLE_PROMPT, "every example is in the native form"


# The notes agent of the guided-call tests: the few-shot role prompt (its native form with
# `native`), one tool round, on the profile named `model`.
def notes_agent(model: str, native: bool = False) -> str:
    return (
        f"---\nname: notes\ndescription: \"Keeps notes\"\nmodel: {model}\ntools:\n"
        "  create_artifact: auto\n  read_artifact: auto\nmax_tool_rounds: 1\n---\n\n"
        + (NATIVE_ROLE_PROMPT if native else ROLE_PROMPT)
    )


# A task SmolLM2-135M, greedy, answers with a call of a tool it made up unless guided.
SAVE_TASK = 'Save a note with id "car", title "Car service", saying: The car needs a service before June.'
