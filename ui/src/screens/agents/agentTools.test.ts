import lead from "../../../../config/agents/lead_agent.md?raw";
import { readAgentTools, setAgentTools, yamlKey } from "./agentTools";

const AGENT = `---
name: tester
# who it is
description: "Tests: things"
tools:
  # the artifact tools
  create_artifact: auto   # keep this comment
  read_artifact: confirm
max_tool_rounds: 5
---

You are the tester.
tools:
  not_frontmatter: auto
`;

const ok = (r: ReturnType<typeof setAgentTools>) => {
  if (!r.ok) throw new Error(`expected an edit, got line ${r.line}: ${r.message}`);
  return r.text;
};

describe("agent tools", () => {
  it("reads the tools map in file order", () => {
    const r = readAgentTools(AGENT);
    expect(r.ok && [...r.tools]).toEqual([
      ["create_artifact", "auto"],
      ["read_artifact", "confirm"],
    ]);
    const l = readAgentTools(lead);
    expect(l.ok && l.tools.get("call_subagent")).toBe("auto");
  });

  it("adds a tool under the last one, keeping every other byte", () => {
    const out = ok(setAgentTools(AGENT, [{ tool: "probe", permission: "confirm" }]));
    expect(out).toBe(
      AGENT.replace("read_artifact: confirm\n", "read_artifact: confirm\n  probe: confirm\n"),
    );
  });

  it("quotes a name that would not read back as itself, and adds MCP names plain", () => {
    expect(yamlKey("everything.get-tiny-image")).toBe("everything.get-tiny-image");
    expect(yamlKey("null")).toBe('"null"');
    expect(yamlKey("1st")).toBe('"1st"');
    expect(yamlKey("a: b")).toBe('"a: b"');
    const out = ok(setAgentTools(AGENT, [{ tool: "weird: name", permission: "auto" }]));
    expect(out).toContain('  "weird: name": auto\n');
    const r = readAgentTools(out);
    expect(r.ok && r.tools.get("weird: name")).toBe("auto");
  });

  it("changes a permission in place, comment and spacing kept", () => {
    const out = ok(setAgentTools(AGENT, [{ tool: "create_artifact", permission: "confirm" }]));
    expect(out).toBe(AGENT.replace("create_artifact: auto   #", "create_artifact: confirm   #"));
  });

  it("removes a tool's line; the last one leaves an empty map", () => {
    const one = ok(setAgentTools(AGENT, [{ tool: "create_artifact", permission: null }]));
    expect(one).toBe(AGENT.replace("  create_artifact: auto   # keep this comment\n", ""));
    const none = ok(setAgentTools(one, [{ tool: "read_artifact", permission: null }]));
    expect(none).toBe(
      AGENT.replace(
        "tools:\n  # the artifact tools\n  create_artifact: auto   # keep this comment\n  read_artifact: confirm\n",
        "tools: {}\n  # the artifact tools\n",
      ),
    );
    const r = readAgentTools(none);
    expect(r.ok && r.tools.size).toBe(0);
    // Removing what is not there changes nothing.
    expect(ok(setAgentTools(AGENT, [{ tool: "nope", permission: null }]))).toBe(AGENT);
  });

  it("adds `tools:` when the file has none, and fills an empty or null one", () => {
    const bare = "---\nname: a\nmodel: default\n---\nBody\n";
    expect(ok(setAgentTools(bare, [{ tool: "x", permission: "auto" }]))).toBe(
      "---\nname: a\nmodel: default\ntools:\n  x: auto\n---\nBody\n",
    );
    const empty = "---\nname: a\ntools: {}\nmax_tool_rounds: 3\n---\nBody\n";
    expect(ok(setAgentTools(empty, [{ tool: "x", permission: "auto" }]))).toBe(
      "---\nname: a\ntools:\n  x: auto\nmax_tool_rounds: 3\n---\nBody\n",
    );
    const commented = "---\nname: a\ntools: {} # none yet\n---\n";
    expect(ok(setAgentTools(commented, [{ tool: "x", permission: "auto" }]))).toBe(
      "---\nname: a\ntools: # none yet\n  x: auto\n---\n",
    );
    const nothing = "---\nname: a\ntools:\nmodel: m\n---\n";
    expect(ok(setAgentTools(nothing, [{ tool: "x", permission: "confirm" }]))).toBe(
      "---\nname: a\ntools:\n  x: confirm\nmodel: m\n---\n",
    );
    const tilde = "---\nname: a\ntools: ~\n---\n";
    expect(ok(setAgentTools(tilde, [{ tool: "x", permission: "auto" }]))).toBe(
      "---\nname: a\ntools:\n  x: auto\n---\n",
    );
  });

  it("edits a flow map in place", () => {
    const flow = "---\nname: a\ntools: {a: auto, b: confirm}\n---\n";
    expect(ok(setAgentTools(flow, [{ tool: "c", permission: "auto" }]))).toBe(
      "---\nname: a\ntools: {a: auto, b: confirm, c: auto}\n---\n",
    );
    expect(ok(setAgentTools(flow, [{ tool: "a", permission: null }]))).toBe(
      "---\nname: a\ntools: {b: confirm}\n---\n",
    );
    expect(ok(setAgentTools(flow, [{ tool: "b", permission: null }]))).toBe(
      "---\nname: a\ntools: {a: auto}\n---\n",
    );
    expect(ok(setAgentTools(flow, [{ tool: "b", permission: "auto" }]))).toBe(
      "---\nname: a\ntools: {a: auto, b: auto}\n---\n",
    );
  });

  it("keeps Windows line ends and a byte order mark", () => {
    const crlf = "\uFEFF---\r\nname: a\r\ntools:\r\n    x: auto\r\n---\r\nBody\r\n";
    expect(ok(setAgentTools(crlf, [{ tool: "web", permission: "confirm" }]))).toBe(
      "\uFEFF---\r\nname: a\r\ntools:\r\n    x: auto\r\n    web: confirm\r\n---\r\nBody\r\n",
    );
    expect(ok(setAgentTools(crlf, [{ tool: "x", permission: null }]))).toBe(
      "\uFEFF---\r\nname: a\r\ntools: {}\r\n---\r\nBody\r\n",
    );
  });

  it("applies several changes at once", () => {
    const out = ok(
      setAgentTools(lead, [
        { tool: "everything.echo", permission: "confirm" },
        { tool: "grep_artifact", permission: null },
        { tool: "read_artifact", permission: "confirm" },
      ]),
    );
    const r = readAgentTools(out);
    expect(r.ok && Object.fromEntries(r.tools)).toMatchObject({
      "everything.echo": "confirm",
      read_artifact: "confirm",
    });
    expect(r.ok && r.tools.has("grep_artifact")).toBe(false);
    // The role prompt is untouched.
    expect(out.slice(out.indexOf("\n---\n"))).toBe(lead.slice(lead.indexOf("\n---\n")));
  });

  it("refuses a broken file with the line, and changes nothing", () => {
    const broken = AGENT.replace("max_tool_rounds: 5", "max_tool_rounds: [5");
    const r = setAgentTools(broken, [{ tool: "x", permission: "auto" }]);
    expect(r.ok).toBe(false);
    if (!r.ok) {
      expect(r.line).toBeGreaterThanOrEqual(9);
      expect(r.message).toMatch(/\S/);
    }
    const noFence = setAgentTools("name: a\n", [{ tool: "x", permission: "auto" }]);
    expect(noFence).toMatchObject({ ok: false, line: 1 });
    const unclosed = setAgentTools("---\nname: a\n", [{ tool: "x", permission: "auto" }]);
    expect(unclosed).toMatchObject({ ok: false, line: 1 });
    const list = setAgentTools("---\nname: a\ntools:\n  - web_search\n---\n", [
      { tool: "x", permission: "auto" },
    ]);
    expect(list).toMatchObject({ ok: false, line: 3 });
    if (!list.ok) expect(list.message).toContain("`tools` must be a map");
    const dup = readAgentTools("---\nname: a\ntools:\n  x: auto\n  x: confirm\n---\n");
    expect(dup).toMatchObject({ ok: false, line: 5 });
  });
});
