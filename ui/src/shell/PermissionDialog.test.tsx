import { act, fireEvent, render, screen } from "@testing-library/react";
import { ARM_DELAY_MS } from "./arming";
import { PermissionDialog } from "./PermissionDialog";
import type { PendingPermission } from "../screens/chat/timeline";
import type { GrantChoice } from "../bindings";

const request = (id: string, tool: string, http = false): PendingPermission => ({
  requestId: id,
  conversationId: "c",
  conversationTitle: "Quarterly numbers",
  agentChain: ["lead_agent", "search_agent"],
  deadlineMs: Date.now() + 60_000,
  request: {
    tool,
    permission: "confirm",
    params: { url: "https://example.com", count: 3 },
    request: http
      ? {
          method: "POST",
          url: "{{API_BASE}}/v1?key={{API_KEY}}",
          headers: { Authorization: "Bearer {{API_KEY}}" },
          body: { q: "x" },
          destination: "https://api.example.com:443",
          destination_error: null,
          secrets: ["API_BASE", "API_KEY"],
        }
      : null,
    grantable: true,
    asking_rule: null,
    stale_grants: [],
    proposed_rule: { tool, when: { url: "https://example.com/**" }, action: "allow" },
    proposal_note: null,
  },
});

/** The dialog over `queue`, recording every answer. Time is fake: nothing here waits. */
function dialogOver(queue: PendingPermission[], reply: () => string | null = () => null) {
  const answers: [string, string][] = [];
  const grants: (GrantChoice | null | undefined)[] = [];
  const onAnswer = (id: string, a: string, grant?: GrantChoice | null) => {
    answers.push([id, a]);
    grants.push(grant);
    return Promise.resolve(reply());
  };
  const view = render(<PermissionDialog queue={queue} onAnswer={onAnswer} />);
  const rerender = (next: PendingPermission[]) =>
    view.rerender(<PermissionDialog queue={next} onAnswer={onAnswer} />);
  return { answers, grants, rerender };
}

const dialog = () => screen.getByTestId("permission-dialog");
const press = (key: string, init: KeyboardEventInit = {}) =>
  fireEvent.keyDown(document.activeElement ?? document.body, { key, ...init });
const wait = (ms: number) => act(() => vi.advanceTimersByTime(ms));

describe("PermissionDialog", () => {
  beforeEach(() => vi.useFakeTimers());
  afterEach(() => vi.useRealTimers());

  it("says who asks and shows every parameter, the HTTP request with secrets by name, the real destination and the secret names", () => {
    dialogOver([request("r1", "quote", true)]);
    expect(dialog()).toHaveAttribute("open");
    expect(dialog()).toHaveTextContent("Allow quote to run?");
    expect(screen.getByTestId("permission-asker")).toHaveTextContent(
      "Asked by lead_agent → search_agent → quote in Quarterly numbers",
    );
    expect(dialog()).toHaveTextContent('"url": "https://example.com"');
    const http = screen.getByTestId("permission-http");
    expect(http).toHaveTextContent("POST {{API_BASE}}/v1?key={{API_KEY}}");
    expect(http).toHaveTextContent("Authorization: Bearer {{API_KEY}}");
    expect(screen.getByTestId("permission-destination")).toHaveTextContent(
      "Goes to https://api.example.com:443",
    );
    expect(screen.getByTestId("permission-secrets")).toHaveTextContent(
      "Uses the secrets API_BASE, API_KEY",
    );
    expect(screen.getByTestId("permission-countdown")).toHaveTextContent(
      "denied automatically in 60 s",
    );
  });

  it("names an MCP server's view as the asker of its call", () => {
    const asked = request("r1", "apps.increment");
    dialogOver([{ ...asked, agentChain: [], request: { ...asked.request, view_of: "apps" } }]);
    expect(screen.getByTestId("permission-asker")).toHaveTextContent(
      "Asked by the view of apps (an MCP server's interactive view in a tool card) in Quarterly numbers",
    );
  });

  it("says when the destination cannot be known", () => {
    const r = request("r1", "quote", true);
    r.request.request = {
      method: "GET",
      url: "{{API_BASE}}/x",
      headers: {},
      body: null,
      destination: null,
      destination_error: "destination unknown: secret API_BASE is not set",
      secrets: ["API_BASE"],
    };
    dialogOver([r]);
    expect(screen.getByTestId("permission-destination")).toHaveTextContent(
      "destination unknown: secret API_BASE is not set",
    );
  });

  it("shows an MCP call's server, tool, JSON arguments and hints, not an HTTP request", () => {
    const r = request("r1", "everything.echo");
    r.request.params = { message: "hi" };
    r.request.request = {
      mcp_server: "everything",
      tool: "echo",
      arguments: { message: "hi" },
      read_only_hint: true,
      destructive_hint: null,
    };
    dialogOver([r]);
    const mcp = screen.getByTestId("permission-mcp");
    expect(mcp).toHaveTextContent("Server everything, tool echo says: read-only");
    expect(mcp).not.toHaveTextContent("destructive");
    expect(screen.getByLabelText("Arguments")).toHaveTextContent('"message": "hi"');
    expect(screen.queryByTestId("permission-http")).toBeNull();
    expect(screen.queryByTestId("permission-destination")).toBeNull();
    // A read-only hint is shown, never trusted: approving still needs the dialog.
    expect(screen.getByTestId("permission-approve")).toBeDisabled();
  });

  it("shows a skill script's exact command line, folder, environment and timeout", () => {
    const r = request("r1", "run_skill_script");
    r.request.params = {
      skill: "csv-report",
      script: "scripts/summarize.py",
      args: "data/sales.csv",
    };
    r.request.request = {
      script_command: "python3 scripts/summarize.py data/sales.csv",
      program: "/usr/bin/python3",
      working_folder: "/config/skills/csv-report",
      environment: "clean: PATH, HOME, locale and temp folders only; no app secrets",
      timeout_secs: 60,
    };
    dialogOver([r]);
    expect(screen.getByLabelText("Command line")).toHaveTextContent(
      "python3 scripts/summarize.py data/sales.csv",
    );
    const body = screen.getByTestId("permission-body");
    expect(body).toHaveTextContent("In the folder/config/skills/csv-report");
    expect(body).toHaveTextContent("no app secrets");
    expect(body).toHaveTextContent("Stopped after60 s");
    expect(body).toHaveTextContent("It is not a sandbox.");
    expect(screen.queryByTestId("permission-http")).toBeNull();
  });

  it("says why Approve is greyed while it arms, and stops saying it once armed", () => {
    dialogOver([request("r1", "one")]);
    expect(screen.getByTestId("permission-approve")).toBeDisabled();
    expect(screen.getByTestId("permission-arming")).toHaveTextContent(
      "Approve is available in 1 s",
    );
    wait(ARM_DELAY_MS);
    expect(screen.getByTestId("permission-approve")).toBeEnabled();
    expect(screen.getByTestId("permission-arming")).toBeEmptyDOMElement();
  });

  it("shows an MCP call's arguments once when they are the parameters", () => {
    const r = request("r1", "everything.echo");
    r.request.params = { message: "hi", count: 2 };
    r.request.request = {
      mcp_server: "everything",
      tool: "echo",
      arguments: { count: 2, message: "hi" },
      read_only_hint: null,
      destructive_hint: null,
    };
    dialogOver([r]);
    const text = dialog().textContent ?? "";
    expect(text.split('"message": "hi"')).toHaveLength(2);
    expect(screen.getByLabelText("Arguments")).toHaveTextContent('"message": "hi"');
  });

  it("shows both when an MCP call's arguments differ from its parameters", () => {
    const r = request("r1", "everything.echo");
    r.request.params = { message: "hi" };
    r.request.request = {
      mcp_server: "everything",
      tool: "echo",
      arguments: { message: "hi", extra: true },
      read_only_hint: null,
      destructive_hint: null,
    };
    dialogOver([r]);
    expect(screen.getByRole("heading", { name: "Parameters" })).toBeInTheDocument();
    expect(screen.getByLabelText("Arguments")).toHaveTextContent('"extra": true');
  });

  it("ignores Enter, Space, Ctrl+Enter and clicks until armed, then answers them", () => {
    const { answers } = dialogOver([request("r1", "one")]);
    // The focus starts on the title, not on a button a keystroke could press.
    expect(screen.getByRole("heading", { name: "Allow one to run?" })).toHaveFocus();
    expect(dialog()).toHaveAttribute("data-armed", "false");
    press("Enter");
    press(" ");
    press("Enter", { ctrlKey: true });
    fireEvent.click(screen.getByTestId("permission-approve"));
    fireEvent.click(screen.getByTestId("permission-always"));
    expect(answers).toEqual([]);

    wait(ARM_DELAY_MS);
    expect(dialog()).toHaveAttribute("data-armed", "true");
    press("Enter");
    press("Enter", { ctrlKey: true });
    fireEvent.click(screen.getByTestId("permission-approve"));
    fireEvent.click(screen.getByTestId("permission-always"));
    expect(answers).toEqual([
      ["r1", "approve"],
      ["r1", "approve_always"],
      ["r1", "approve"],
      ["r1", "approve_always"],
    ]);
  });

  it("keeps disarmed while keys keep coming, so typing meant for the composer never approves", () => {
    const { answers } = dialogOver([request("r1", "one")]);
    for (let i = 0; i < 10; i++) {
      wait(ARM_DELAY_MS - 100);
      press(i % 2 ? "Enter" : "a");
    }
    expect(answers).toEqual([]);
    expect(dialog()).toHaveAttribute("data-armed", "false");
    wait(ARM_DELAY_MS);
    press("Enter");
    expect(answers).toEqual([["r1", "approve"]]);
  });

  it("never approves with a held (repeating) key", () => {
    const { answers } = dialogOver([request("r1", "one")]);
    wait(ARM_DELAY_MS);
    press("Enter", { repeat: true });
    expect(answers).toEqual([]);
  });

  it("denies with Escape and Deny at once, armed or not", () => {
    const { answers, rerender } = dialogOver([request("r1", "one"), request("r2", "two")]);
    fireEvent(dialog(), new Event("cancel", { cancelable: true }));
    rerender([request("r2", "two")]);
    fireEvent.click(screen.getByTestId("permission-deny"));
    expect(answers).toEqual([
      ["r1", "deny"],
      ["r2", "deny"],
    ]);
  });

  it("re-arms for each queued request: a double click or a second Enter cannot approve the next one unseen", () => {
    const { answers, rerender } = dialogOver([request("r1", "one"), request("r2", "two")]);
    expect(dialog()).toHaveTextContent("1 more waiting");
    wait(ARM_DELAY_MS);
    fireEvent.click(screen.getByTestId("permission-approve"));
    expect(answers).toEqual([["r1", "approve"]]);

    // The queue moves on under the pointer: the second click and Enter do nothing.
    rerender([request("r2", "two")]);
    expect(dialog()).toHaveTextContent("Allow two to run?");
    expect(dialog()).toHaveAttribute("data-armed", "false");
    expect(screen.getByRole("heading", { name: "Allow two to run?" })).toHaveFocus();
    fireEvent.click(screen.getByTestId("permission-approve"));
    press("Enter");
    expect(answers).toEqual([["r1", "approve"]]);

    wait(ARM_DELAY_MS);
    press("Enter");
    expect(answers).toEqual([
      ["r1", "approve"],
      ["r2", "approve"],
    ]);
    rerender([]);
    expect(screen.getByRole("dialog", { hidden: true })).not.toHaveAttribute("open");
  });

  it("leaves Enter on a focused button to that button", () => {
    const { answers } = dialogOver([request("r1", "one")]);
    wait(ARM_DELAY_MS);
    screen.getByTestId("permission-deny").focus();
    press("Enter");
    expect(answers).toEqual([]);
  });

  it("offers always-allow as the tool or calls like this; the proposed rule is edited inline and saved with the approval", async () => {
    const { answers, grants } = dialogOver([request("r1", "web_fetch")]);
    const always = screen.getByRole("group", { name: "Always allow" });
    expect(always).toHaveTextContent("This tool in this conversation");
    fireEvent.click(screen.getByTestId("permission-like-this"));
    const editor = screen.getByTestId("permission-rule-editor");
    expect(screen.getByTestId("permission-rule-tool")).toHaveValue("web_fetch");
    expect(screen.getByTestId("permission-rule-key-0")).toHaveValue("url");
    expect(screen.getByTestId("permission-rule-pattern-0")).toHaveValue("https://example.com/**");
    // Disarmed at first, like the other approvals.
    expect(screen.getByTestId("permission-save-rule")).toBeDisabled();
    fireEvent.change(screen.getByTestId("permission-rule-pattern-0"), {
      target: { value: "https://example.com/docs/**" },
    });
    fireEvent.click(screen.getByTestId("permission-rule-add"));
    fireEvent.change(screen.getByLabelText("Condition 2 parameter"), {
      target: { value: "count" },
    });
    fireEvent.change(screen.getByLabelText("Condition 2 pattern"), { target: { value: "3" } });
    expect(editor).toBeInTheDocument();
    wait(ARM_DELAY_MS);
    fireEvent.click(screen.getByTestId("permission-save-rule"));
    expect(answers).toEqual([["r1", "approve_always"]]);
    expect(grants).toEqual([
      {
        kind: "rule",
        rule: {
          tool: "web_fetch",
          when: { url: "https://example.com/docs/**", count: "3" },
          action: "allow",
        },
      },
    ]);
    // The rule's decisions are in the footer (always in view), in place of the others; Back
    // closes the editor and brings them back.
    const footer = screen.getByTestId("permission-actions");
    expect(footer).toContainElement(screen.getByTestId("permission-save-rule"));
    expect(screen.queryByTestId("permission-approve")).toBeNull();
    fireEvent.click(screen.getByTestId("permission-rule-cancel"));
    expect(screen.queryByTestId("permission-rule-editor")).toBeNull();
    expect(footer).toContainElement(screen.getByTestId("permission-approve"));
    // "This tool in this conversation" sends the tool choice.
    fireEvent.click(screen.getByTestId("permission-always"));
    expect(grants[1]).toEqual({ kind: "tool" });
    await act(() => Promise.resolve());
  });

  it("keeps the dialog and shows the error when the rule is refused", async () => {
    const { answers } = dialogOver(
      [request("r1", "web_fetch")],
      () => "the rule is not valid: when.url: bad glob `[`: unclosed character class",
    );
    fireEvent.click(screen.getByTestId("permission-like-this"));
    fireEvent.change(screen.getByTestId("permission-rule-pattern-0"), { target: { value: "[" } });
    wait(ARM_DELAY_MS);
    fireEvent.click(screen.getByTestId("permission-save-rule"));
    expect(answers).toEqual([["r1", "approve_always"]]);
    // The refusal comes back asynchronously (the command's answer).
    await act(() => Promise.resolve());
    expect(screen.getByTestId("permission-rule-error")).toHaveTextContent("when.url: bad glob");
    expect(screen.getByTestId("permission-rule-editor")).toBeInTheDocument();
    expect(dialog()).toHaveAttribute("open");
  });

  it("says why it asks again when an earlier grant no longer applies", () => {
    const r = request("r1", "stock_price");
    r.request.stale_grants = [
      "You allowed stock_price in this conversation when it went to api.a.com; it now goes to api.b.com",
    ];
    dialogOver([r]);
    expect(screen.getByTestId("permission-stale")).toHaveTextContent(
      "Asking again: You allowed stock_price in this conversation when it went to api.a.com; it now goes to api.b.com",
    );
  });

  it("offers no always-allow when a rule asks every time, and says which rule", () => {
    const r = request("r1", "web_fetch");
    r.request.grantable = false;
    r.request.proposed_rule = null;
    r.request.asking_rule = "rule `confirm web_fetch` (settings.yaml:3)";
    const { answers } = dialogOver([r]);
    expect(screen.getByTestId("permission-rule-asks")).toHaveTextContent(
      "A rule asks every time: rule `confirm web_fetch` (settings.yaml:3)",
    );
    expect(screen.queryByTestId("permission-always")).toBeNull();
    expect(screen.queryByTestId("permission-like-this")).toBeNull();
    wait(ARM_DELAY_MS);
    // Ctrl+Enter approves this call only.
    press("Enter", { ctrlKey: true });
    expect(answers).toEqual([["r1", "approve"]]);
  });
  it("keeps every decision button in a footer outside the scrolling body, so a small window never hides them", () => {
    const r = request("r1", "quote", true);
    r.request.params = { text: "line\n".repeat(200) };
    dialogOver([r]);
    const body = screen.getByTestId("permission-body");
    const footer = screen.getByTestId("permission-actions");
    expect(body).toHaveClass("dialog-body");
    expect(footer).toHaveClass("dialog-footer");
    // The request scrolls inside the body; the answers sit after it, never inside it.
    expect(body).toContainElement(screen.getByTestId("permission-http"));
    expect(body).toHaveTextContent('"text": "line');
    expect(body).not.toContainElement(footer);
    expect(footer.parentElement).toBe(dialog());
    for (const id of ["deny", "approve", "always", "like-this"]) {
      const button = screen.getByTestId(`permission-${id}`);
      expect(footer).toContainElement(button);
      expect(body).not.toContainElement(button);
    }
    // The title and the countdown stay on top, outside the body too.
    expect(body).not.toContainElement(screen.getByTestId("permission-countdown"));
    expect(body).not.toContainElement(screen.getByRole("heading", { name: "Allow quote to run?" }));
  });
});
