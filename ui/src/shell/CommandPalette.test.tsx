import { act, fireEvent, render, screen, waitFor, within } from "@testing-library/react";
import userEvent from "@testing-library/user-event";
import { mockIPC } from "@tauri-apps/api/mocks";
import { App } from "../App";
import type { Status } from "../bindings";
import { fuzzyFilter, fuzzyScore } from "./fuzzy";
import { NARROW_BELOW } from "./useLayout";

const STATUS: Status = {
  app_version: "1.0.0",
  config_dir: "/c",
  database: "/d/artifactflow.db",
  schema_version: 7,
  log_dir: "/l",
  tools_loaded: 1,
  agents_loaded: 2,
  config_errors: [],
};

const CONVERSATION = {
  id: "c42",
  title: "Penguin migration notes",
  agent: "lead_agent",
  updated_at: "2026-11-29T10:00:00Z",
  last_status: "completed",
  always_allowed: [],
};

const ARTIFACT = {
  id: "report",
  conversation_id: "c42",
  title: "Penguin report",
  content_type: "text/markdown",
  source: "agent",
  version: 1,
  created_at: "2026-11-29T10:00:00Z",
  updated_at: "2026-11-29T10:00:00Z",
  size_chars: 10,
  line_count: 1,
  size_bytes: 10,
  binary: false,
};

function backend() {
  const calls: { cmd: string; args: Record<string, unknown> }[] = [];
  mockIPC((cmd, raw) => {
    const args = (raw ?? {}) as Record<string, unknown>;
    calls.push({ cmd, args });
    if (cmd === "get_status" || cmd === "reload_config") return STATUS;
    if (cmd === "list_conversation_page") {
      const q = (args.query as string | null)?.toLowerCase();
      const items = !q || CONVERSATION.title.toLowerCase().includes(q) ? [CONVERSATION] : [];
      return { items, total: items.length };
    }
    if (cmd === "list_artifacts") {
      const q = (args.query as { query: string | null }).query?.toLowerCase();
      const items = q && ARTIFACT.title.toLowerCase().includes(q) ? [ARTIFACT] : [];
      return { items, total: items.length };
    }
    if (cmd === "list_agents")
      return [
        { name: "lead_agent", description: "Leads", model: null, internal: false },
        { name: "researcher", description: "Finds sources", model: null, internal: false },
      ];
    if (cmd === "list_tools")
      return [
        {
          name: "web_fetch",
          description: "Fetch a page",
          source: "builtin",
          file: null,
          server: null,
          permission: "confirm",
          params: [],
          used_by: [],
          instructions: "",
        },
      ];
    if (cmd === "get_conversation") return { summary: CONVERSATION, messages: [], running: false };
    if (cmd === "list_config_files" || cmd === "mcp_servers") return [];
    if (cmd === "get_app_info")
      return {
        name: "ArtifactFlow",
        version: "1.0.0",
        identifier: "app.artifactflow.desktop",
        tauri_version: "2",
        license: "MIT",
        homepage: "https://example.com",
        releases: "https://example.com/releases",
        issues: "https://example.com/issues",
        update_url: null,
        can_install_updates: false,
      };
    if (cmd === "artifact_versions") return [];
    if (cmd === "get_artifact_version")
      return {
        id: "report",
        title: "Penguin report",
        content_type: "text/markdown",
        version: 1,
        content: "Penguins.\n",
      };
    if (cmd === "list_conversations") return [CONVERSATION];
    throw new Error(`unexpected command ${cmd}`);
  });
  return calls;
}

const heading = () => screen.getByRole("heading", { level: 1 });

/** Escape as the browser delivers it to a modal dialog: a cancelable `cancel` event. */
const pressEscape = (dialog: HTMLElement) =>
  act(() => {
    fireEvent(dialog, new Event("cancel", { cancelable: true }));
  });

describe("command palette and shortcuts", () => {
  it(
    "opens with Ctrl+K, filters fuzzily, moves with the arrows, runs with Enter",
    {
      timeout: 20_000,
    },
    async () => {
      backend();
      const user = userEvent.setup();
      render(<App />);
      const search = await screen.findByRole("searchbox", { name: "Search conversations" });
      await user.click(search);
      await user.keyboard("{Control>}k{/Control}");
      const input = await screen.findByRole("combobox", { name: /Go to a screen/ });
      expect(input).toHaveFocus();

      await user.keyboard("stgs");
      const options = within(screen.getByRole("listbox")).getAllByRole("option");
      expect(options[0]).toHaveTextContent("Go toSettings");
      expect(options[0]).toHaveAttribute("aria-selected", "true");
      await user.keyboard("{Enter}");
      await waitFor(() => expect(heading()).toHaveTextContent("Settings"));
      expect(screen.queryByTestId("command-palette")).not.toHaveAttribute("open");
      // The focus lands on the new screen's heading, not on the page's body.
      await waitFor(() => expect(heading()).toHaveFocus());

      // Escape closes it and gives the focus back.
      const nav = screen.getByTestId("nav-tools");
      nav.focus();
      await user.keyboard("{Control>}k{/Control}");
      await screen.findByRole("combobox");
      await pressEscape(screen.getByTestId("command-palette"));
      expect(screen.queryByRole("combobox")).toBeNull();
      expect(nav).toHaveFocus();

      // Arrow keys move through the entries.
      await user.keyboard("{Control>}k{/Control}");
      await user.keyboard("go to");
      const entries = within(await screen.findByRole("listbox")).getAllByRole("option");
      expect(entries.map((e) => e.textContent)).toEqual(
        expect.arrayContaining(["Go toChat", "Go toAgents", "Go toTools"]),
      );
      await user.keyboard("{ArrowDown}{ArrowDown}");
      expect(entries[2]).toHaveAttribute("aria-selected", "true");
      await user.keyboard("{ArrowUp}");
      expect(entries[1]).toHaveAttribute("aria-selected", "true");
      await user.keyboard("{Enter}");
      await waitFor(() =>
        expect(heading()).toHaveTextContent(entries[1]?.textContent?.replace("Go to", "") ?? "?"),
      );
    },
  );

  it(
    "opens a conversation, an artifact and a tool it searched for, and starts an agent",
    {
      timeout: 20_000,
    },
    async () => {
      const calls = backend();
      const user = userEvent.setup();
      render(<App />);
      await screen.findByRole("searchbox", { name: "Search conversations" });

      await user.keyboard("{Control>}k{/Control}");
      await user.keyboard("penguin");
      const conversation = await screen.findByRole("option", { name: /Penguin migration notes/ });
      expect(calls).toContainEqual({
        cmd: "list_conversation_page",
        args: { query: "penguin", limit: 8, offset: 0 },
      });
      await user.click(conversation);
      await waitFor(() => expect(heading()).toHaveTextContent("Penguin migration notes"));
      expect(calls.filter((c) => c.cmd === "get_conversation").at(-1)?.args).toEqual({ id: "c42" });

      await user.keyboard("{Control>}k{/Control}");
      await user.keyboard("penguin rep");
      await user.click(await screen.findByRole("option", { name: /Penguin report/ }));
      await waitFor(() => expect(heading()).toHaveTextContent("Artifacts"));
      await waitFor(() =>
        expect(calls.some((c) => c.cmd === "get_artifact_version" && c.args.id === "report")).toBe(
          true,
        ),
      );

      await user.keyboard("{Control>}k{/Control}");
      await user.keyboard("researcher");
      await user.click(await screen.findByRole("option", { name: /Run agent.*researcher/ }));
      await waitFor(() => expect(heading()).toHaveTextContent("New conversation"));
      await waitFor(() => expect(screen.getByTestId("agent-picker")).toHaveValue("researcher"));

      await user.keyboard("{Control>}k{/Control}");
      await user.keyboard("web_f");
      await user.click(await screen.findByRole("option", { name: /web_fetch/ }));
      await waitFor(() => expect(heading()).toHaveTextContent("Tools"));
      const row = await screen.findByTestId("tool-row-web_fetch");
      await waitFor(() => expect(row).toHaveAttribute("open"));
      expect(row.querySelector("summary")).toHaveFocus();
    },
  );

  it(
    "starts a new conversation with Ctrl+N, focus in the composer",
    { timeout: 20_000 },
    async () => {
      backend();
      const user = userEvent.setup();
      render(<App />);
      await user.click(await screen.findByTestId("conversation-item"));
      await waitFor(() => expect(heading()).toHaveTextContent("Penguin migration notes"));
      await user.click(screen.getByTestId("nav-settings"));
      await user.keyboard("{Control>}n{/Control}");
      await waitFor(() => expect(heading()).toHaveTextContent("New conversation"));
      await waitFor(() => expect(screen.getByTestId("composer-input")).toHaveFocus());
    },
  );

  it("lists the shortcuts with ? or Ctrl+/ and from About", { timeout: 20_000 }, async () => {
    backend();
    const user = userEvent.setup();
    render(<App />);
    await screen.findByRole("searchbox", { name: "Search conversations" });
    await user.click(screen.getByTestId("nav-agents"));
    await user.keyboard("?");
    const sheet = await screen.findByRole("dialog", { name: "Keyboard shortcuts" });
    expect(sheet).toHaveTextContent("Ctrl+KCommand palette");
    expect(sheet).toHaveTextContent("Ctrl+NNew conversation");
    await pressEscape(sheet);
    expect(screen.queryByRole("dialog", { name: "Keyboard shortcuts" })).toBeNull();
    await user.keyboard("{Control>}/{/Control}");
    expect(await screen.findByRole("dialog", { name: "Keyboard shortcuts" })).toBeInTheDocument();
    await user.click(screen.getByRole("button", { name: "Close" }));

    // Typing "?" in a text field is just a character.
    await user.click(screen.getByTestId("nav-chat"));
    await user.type(screen.getByRole("searchbox", { name: "Search conversations" }), "why?");
    expect(screen.queryByRole("dialog", { name: "Keyboard shortcuts" })).toBeNull();

    await user.click(screen.getByTestId("about-open"));
    await user.click(await screen.findByTestId("about-shortcuts"));
    expect(await screen.findByRole("dialog", { name: "Keyboard shortcuts" })).toBeInTheDocument();
  });
});

describe("collapsed sidebar", () => {
  const resize = (width: number) =>
    act(() => {
      Object.defineProperty(window, "innerWidth", { configurable: true, value: width });
      window.dispatchEvent(new Event("resize"));
    });
  afterEach(() => resize(1024));

  it(
    "collapses with its toggle, remembers it across restarts, and collapses by itself when narrow",
    {
      timeout: 20_000,
    },
    async () => {
      await resize(1200);
      backend();
      const user = userEvent.setup();
      const { container, unmount } = render(<App />);
      const app = container.querySelector(".app");
      const toggle = await screen.findByRole("button", {
        name: "Hide the sidebar and conversation list",
      });
      expect(toggle).toHaveAttribute("aria-expanded", "true");
      expect(app).not.toHaveClass("collapsed");
      await user.click(toggle);
      expect(app).toHaveClass("collapsed");
      expect(toggle).toHaveAccessibleName("Show the sidebar and conversation list");
      expect(toggle).toHaveAttribute("aria-expanded", "false");
      // The screens keep their names while only icons show.
      expect(screen.getByTestId("nav-tools")).toHaveAccessibleName(/Tools/);
      unmount();

      // A restart keeps the choice.
      const again = render(<App />);
      expect(again.container.querySelector(".app")).toHaveClass("collapsed");
      await user.click(
        screen.getByRole("button", { name: "Show the sidebar and conversation list" }),
      );
      expect(again.container.querySelector(".app")).not.toHaveClass("collapsed");

      // A narrow window collapses them, a wide one brings them back.
      await resize(NARROW_BELOW - 240);
      expect(again.container.querySelector(".app")).toHaveClass("collapsed");
      await resize(1200);
      expect(again.container.querySelector(".app")).not.toHaveClass("collapsed");
    },
  );
});

describe("fuzzy filter", () => {
  it("keeps entries with the query's letters in order, best matches first", () => {
    expect(fuzzyScore("nc", "New conversation")).not.toBeNull();
    expect(fuzzyScore("cn", "New conversation")).not.toBeNull();
    expect(fuzzyScore("xyz", "New conversation")).toBeNull();
    expect(fuzzyFilter(["Unconfirmed", "New conversation", "Settings"], "nc", (s) => s)).toEqual([
      "New conversation",
      "Unconfirmed",
    ]);
    expect(fuzzyFilter(["Agents", "Settings"], "SET", (s) => s)).toEqual(["Settings"]);
  });
});
