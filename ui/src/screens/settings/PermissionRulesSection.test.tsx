import { screen, waitFor, within } from "@testing-library/react";
import userEvent from "@testing-library/user-event";
import { mockIPC } from "@tauri-apps/api/mocks";
import { render } from "../../test/render";
import type { PermissionRulesView, RuleSpec, RuleView } from "../../bindings";
import { PermissionRulesSection } from "./PermissionRulesSection";

const DOCS: RuleSpec = { tool: "web_fetch", when: { url: "https://docs.rs/**" }, action: "allow" };

function view(global: RuleSpec[]): PermissionRulesView {
  return {
    global: [
      ...global.map((spec, i): RuleView => ({
        origin: { kind: "global", file: "settings.yaml", line: 2 + i * 3 },
        spec,
        error: null,
        tools: ["web_fetch"],
      })),
      {
        origin: { kind: "global", file: "settings.yaml", line: 20 },
        spec: { tool: "nope", when: {}, action: "deny" },
        error: "there is no tool `nope`: use one of web_fetch or a glob such as `github.*`",
        tools: [],
      },
    ],
    agents: [
      {
        agent: "reader",
        path: "/c/agents/reader.md",
        rules: [
          {
            origin: { kind: "agent", agent: "reader", file: "agents/reader.md", line: 7 },
            spec: { tool: "web_fetch", when: {}, action: "confirm" },
            error: null,
            tools: ["web_fetch"],
          },
        ],
      },
    ],
  };
}

/** A stand-in backend keeping the saved global rules; `refuse` makes a save fail. */
function backend(refuse: string | null = null) {
  let global: RuleSpec[] = [DOCS];
  const saved: RuleSpec[][] = [];
  mockIPC((cmd, args) => {
    if (cmd === "list_permission_rules") return view(global);
    if (cmd === "save_global_permission_rules") {
      const rules = (args as { rules: RuleSpec[] }).rules;
      saved.push(rules);
      if (refuse) throw { code: "invalid_config", message: refuse };
      global = rules.filter((r) => r.tool !== "nope");
      return null;
    }
    throw new Error(`unexpected command ${cmd}`);
  });
  return saved;
}

describe("Settings: permission rules", () => {
  it("lists global and agent rules with their origin; ignored ones show why", async () => {
    backend();
    const opened: string[] = [];
    render(<PermissionRulesSection onOpenAgentFile={(p) => opened.push(p)} />);
    const list = await screen.findByRole("list", { name: "Permission rules" });
    const rows = within(list).getAllByRole("listitem");
    const agentRow = rows[2] as HTMLElement;
    expect(rows[0]).toHaveTextContent(
      "allow web_fetch when url=https://docs.rs/** Settings, settings.yaml:2",
    );
    expect(rows[1]).toHaveTextContent("Ignored: there is no tool `nope`");
    expect(rows[2]).toHaveTextContent("confirm web_fetch agent reader, agents/reader.md:7");
    // Agent rules are edited in their file.
    expect(within(agentRow).queryByRole("button", { name: /Edit/ })).toBeNull();
    await userEvent
      .setup()
      .click(within(agentRow).getByRole("button", { name: "Open reader in editor" }));
    expect(opened).toEqual(["/c/agents/reader.md"]);
  });

  it("adds a rule with conditions from the keyboard, edits and deletes one", async () => {
    const saved = backend();
    const user = userEvent.setup();
    render(<PermissionRulesSection />);
    await user.click(await screen.findByRole("button", { name: "Add rule" }));
    const form = within(screen.getByRole("form", { name: "New rule" }));
    await user.type(form.getByLabelText("Tool"), "*");
    await user.click(form.getByRole("button", { name: "Add condition" }));
    await user.type(form.getByLabelText("Parameter 1"), "$host");
    await user.type(form.getByLabelText("Pattern 1"), "*.internal");
    await user.selectOptions(form.getByLabelText("Action"), "deny");
    // Enter in a text field submits the form.
    await user.click(form.getByLabelText("Pattern 1"));
    await user.keyboard("{Enter}");
    await waitFor(() => expect(saved).toHaveLength(1));
    expect(saved[0]).toEqual([
      DOCS,
      { tool: "nope", when: {}, action: "deny" },
      { tool: "*", when: { $host: "*.internal" }, action: "deny" },
    ]);
    expect(await screen.findByText("* when $host=*.internal")).toBeInTheDocument();

    await user.click(
      screen.getByRole("button", { name: "Edit rule web_fetch when url=https://docs.rs/**" }),
    );
    const edit = within(screen.getByRole("form", { name: "Edit rule" }));
    expect(edit.getByLabelText("Pattern 1")).toHaveValue("https://docs.rs/**");
    await user.click(edit.getByRole("button", { name: "Remove condition 1" }));
    await user.click(edit.getByRole("button", { name: "Save rule" }));
    await waitFor(() => expect(saved).toHaveLength(2));
    expect(saved[1]?.[0]).toEqual({ tool: "web_fetch", when: {}, action: "allow" });

    await user.click(await screen.findByRole("button", { name: "Delete rule web_fetch" }));
    await waitFor(() => expect(saved).toHaveLength(3));
    expect(saved[2]?.map((r) => r.tool)).toEqual(["*", "nope"]);
  });

  it("shows the form's own and the backend's validation errors and keeps the form open", async () => {
    const saved = backend(
      "settings.yaml: field `permission_rules[1]`: rule 2 (ec[ho): tool: bad glob `ec[ho`",
    );
    const user = userEvent.setup();
    render(<PermissionRulesSection />);
    await user.click(await screen.findByRole("button", { name: "Add rule" }));
    const form = within(screen.getByRole("form", { name: "New rule" }));
    await user.click(form.getByRole("button", { name: "Save rule" }));
    expect(form.getByRole("alert")).toHaveTextContent("Name a tool");
    expect(saved).toHaveLength(0);
    await user.type(form.getByLabelText("Tool"), "ec[[ho");
    await user.click(form.getByRole("button", { name: "Save rule" }));
    expect(await form.findByText(/bad glob/)).toBeInTheDocument();
    expect(screen.getByRole("form", { name: "New rule" })).toBeInTheDocument();
  });
});
