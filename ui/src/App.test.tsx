import { act, render, screen, waitFor, within } from "@testing-library/react";
import { pushEngine, pushStatus } from "./test/pushed";
import userEvent from "@testing-library/user-event";
import { mockIPC } from "@tauri-apps/api/mocks";
import { App } from "./App";
import type { Status } from "./bindings";
import indexHtml from "../index.html?raw";

const STATUS: Status = {
  app_version: "9.8.7",
  config_dir: "/home/u/.config/artifactflow",
  database: "/home/u/.local/share/artifactflow/artifactflow.db",
  schema_version: 1,
  log_dir: "/home/u/.local/share/artifactflow/logs",
  tools_loaded: 2,
  agents_loaded: 3,
  config_errors: [
    { file: "/c/tools/bad.md", line: 4, field: "method", message: "unknown method `FETCH`" },
  ],
};

const DEFAULT_PROFILE = {
  name: "default",
  api: "openai",
  base_url: "http://127.0.0.1:11434/v1",
  model: "m",
  api_key: null,
  temperature: null,
  max_tokens: null,
  timeout: null,
};

function settingsView(profiles: (typeof DEFAULT_PROFILE)[]) {
  return {
    profiles,
    settings: {
      web_search: { endpoint: "", api_key: null },
      web_fetch: { endpoint: "", api_key: null },
      permission_timeout_secs: 120,
    },
    secret_names: [],
    missing_secrets: [],
    config_dir: STATUS.config_dir,
  };
}

function backend(overrides: Partial<Record<string, () => unknown>> = {}) {
  const calls: string[] = [];
  mockIPC((cmd) => {
    calls.push(cmd);
    const handler = overrides[cmd];
    if (handler) return handler();
    if (cmd === "get_status" || cmd === "reload_config") return STATUS;
    if (cmd === "list_conversations" || cmd === "list_tools") return [];
    if (cmd === "list_artifacts" || cmd === "list_conversation_page")
      return { items: [], total: 0 };
    if (cmd === "list_agents" || cmd === "list_config_files" || cmd === "mcp_servers") return [];
    if (cmd === "get_settings") return settingsView([DEFAULT_PROFILE]);
    if (cmd === "models_list")
      return {
        dir: "/data/models",
        installed: [],
        downloads: [],
        machine: { total_memory: 16e9, available_memory: 8e9, free_disk: 100e9, cores: 4 },
      };
    if (cmd === "skills_list")
      return {
        skills: [],
        problems: [],
        skills_dir: "/config/skills",
        user_folders: false,
        user_folder_paths: [],
      };
    if (cmd === "models_catalog")
      return {
        machine: { total_memory: 16e9, available_memory: 8e9, free_disk: 100e9, cores: 4 },
        items: [],
      };
    throw new Error(`unexpected command ${cmd}`);
  });
  return calls;
}

/** Wait for the screen titled `title` (the screens other than the chat load lazily). */
async function expectScreen(title: string) {
  await waitFor(() => expect(screen.getByRole("heading", { level: 1 })).toHaveTextContent(title));
}

describe("App shell", () => {
  // The lazily loaded screens (App.tsx), imported once up front: a test's waits are then about
  // what renders, not about the test runner transforming a module on its first use.
  beforeAll(async () => {
    await Promise.all([
      import("./screens/agents/AgentsScreen"),
      import("./screens/tools/ToolsScreen"),
      import("./screens/models/ModelsScreen"),
      import("./screens/artifacts/ArtifactsScreen"),
      import("./screens/settings/SettingsScreen"),
      import("./screens/settings/FirstRunSetup"),
    ]);
  }, 120_000);

  it("shows the backend's status in the status area", async () => {
    backend();
    render(<App />);
    expect(await screen.findByTestId("status-version")).toHaveTextContent("9.8.7");
    expect(screen.getByTestId("status-tools")).toHaveTextContent("2");
    expect(screen.getByTestId("status-agents")).toHaveTextContent("3");
    expect(screen.getByTestId("status-config-dir")).toHaveAttribute("title", STATUS.config_dir);
    expect(screen.getByTestId("status-config-dir")).toHaveTextContent("…/u/.config/artifactflow");
    expect(screen.getByTestId("status-database")).toHaveAttribute("title", STATUS.database);
    expect(screen.getByTestId("status-database")).toHaveTextContent("…/artifactflow.db");
    expect(screen.getByTestId("status-problems")).toHaveTextContent("1 config file has problems");
  });

  it("follows status-changed events from the backend", async () => {
    backend();
    render(<App />);
    expect(await screen.findByTestId("status-tools")).toHaveTextContent("2");
    await act(() => pushStatus({ status: { ...STATUS, tools_loaded: 5, config_errors: [] } }));
    expect(screen.getByTestId("status-tools")).toHaveTextContent("5");
    expect(screen.queryByTestId("status-problems")).toBeNull();
  });

  it("counts failed MCP servers as problems in the status area and lists why under Tools", async () => {
    const server = (name: string, status: unknown) => ({
      name,
      transport: "stdio",
      target: name,
      status,
      command_path: null,
      command_from_login_shell: false,
      pid: null,
      protocol_version: null,
      stderr_tail: [],
    });
    let servers = [
      server("ok", { state: "ready", tool_count: 3 }),
      server("typo", {
        state: "failed",
        reason: "command `npxx` not found on PATH; check the command in mcp.json",
        stderr_tail: [],
      }),
    ];
    backend({
      get_status: () => ({ ...STATUS, config_errors: [] }),
      mcp_servers: () => servers,
    });
    const user = userEvent.setup();
    render(<App />);
    expect(await screen.findByTestId("status-mcp-failed")).toHaveTextContent("1 MCP server failed");
    expect(screen.queryByTestId("status-problems")).toBeNull();
    await user.click(screen.getByRole("button", { name: "see Tools" }));
    await expectScreen("Tools");
    const listed = await screen.findByTestId("mcp-problems");
    expect(listed).toHaveTextContent("MCP server typo failed: command `npxx` not found on PATH");
    // Once the server runs (its status event), the problem is gone from both places.
    servers = servers.map((s) => ({ ...s, status: { state: "ready", tool_count: 1 } }));
    await act(() =>
      pushEngine({
        type: "mcp_server_status",
        server: "typo",
        status: { state: "ready", tool_count: 1 },
      }),
    );
    await waitFor(() => expect(screen.queryByTestId("status-mcp-failed")).toBeNull());
    expect(screen.queryByTestId("mcp-problems")).toBeNull();
  });

  it("shows the backend's error code message when the engine is unavailable", async () => {
    backend({
      get_status: () => {
        throw { code: "engine_unavailable", message: "database is from a newer version" };
      },
    });
    render(<App />);
    expect(await screen.findByRole("alert")).toHaveTextContent("database is from a newer version");
  });

  it("navigates with clicks and with Ctrl+number, marking the current page", async () => {
    backend();
    const user = userEvent.setup();
    render(<App />);
    expect(screen.getByRole("heading", { level: 1 })).toHaveTextContent("New conversation");
    await user.click(screen.getByTestId("nav-tools"));
    await expectScreen("Tools");
    expect(screen.getByTestId("nav-tools")).toHaveAttribute("aria-current", "page");
    expect(await screen.findByTestId("config-errors")).toHaveTextContent(
      "/c/tools/bad.md:4 field method: unknown method `FETCH`",
    );
    await user.keyboard("{Control>}7{/Control}");
    await expectScreen("Settings");
    await user.keyboard("{Control>}6{/Control}");
    await expectScreen("Models");
    await user.keyboard("{Control>}5{/Control}");
    await expectScreen("Artifacts");
    await user.keyboard("{Control>}4{/Control}");
    await expectScreen("Skills");
    await user.keyboard("{Control>}2{/Control}");
    await expectScreen("Agents");
  });

  it("moves the focus to the new screen's heading after Ctrl+number, not to the page's body", async () => {
    backend();
    const user = userEvent.setup();
    render(<App />);
    // The first screen does not take the focus by itself.
    await screen.findByRole("searchbox", { name: "Search conversations" });
    expect(screen.getByRole("heading", { level: 1 })).not.toHaveFocus();
    await user.click(screen.getByTestId("nav-tools"));
    await expectScreen("Tools");
    for (const [key, name] of [
      ["7", "Settings"],
      ["6", "Models"],
      ["5", "Artifacts"],
      ["4", "Skills"],
      ["2", "Agents"],
      ["3", "Tools"],
      ["1", "New conversation"],
    ] as const) {
      await user.keyboard(`{Control>}${key}{/Control}`);
      await waitFor(() => expect(screen.getByRole("heading", { level: 1, name })).toHaveFocus());
    }
    // Tab continues from the heading, into the screen.
    await user.tab();
    expect(document.activeElement).not.toBe(document.body);
    expect(screen.getByRole("main")).toContainElement(document.activeElement as HTMLElement);
  });

  it("returns to the open conversation after visiting another screen", async () => {
    const conv = {
      id: "c9",
      title: "Penguin research",
      agent: "lead_agent",
      updated_at: "2026-11-29T10:00:00Z",
      last_status: "completed",
      always_allowed: [],
    };
    const calls = backend({
      list_conversation_page: () => ({ items: [conv], total: 1 }),
      get_conversation: () => ({ summary: conv, messages: [], running: false }),
      list_config_files: () => [],
    });
    const user = userEvent.setup();
    render(<App />);
    await user.click(await screen.findByTestId("conversation-item"));
    await waitFor(() =>
      expect(screen.getByRole("heading", { level: 1 })).toHaveTextContent("Penguin research"),
    );
    await user.click(screen.getByTestId("nav-agents"));
    await expectScreen("Agents");
    await user.click(screen.getByTestId("nav-chat"));
    await waitFor(() =>
      expect(screen.getByRole("heading", { level: 1 })).toHaveTextContent("Penguin research"),
    );
    // The chat was kept meanwhile (out of sight), not loaded again.
    expect(calls.filter((c) => c === "get_conversation")).toHaveLength(1);
  });

  it("switches to dark theme from Settings and remembers it", async () => {
    backend();
    const user = userEvent.setup();
    render(<App />);
    await user.click(screen.getByTestId("nav-settings"));
    await user.click(await screen.findByRole("radio", { name: "Dark" }));
    expect(document.documentElement.dataset.theme).toBe("dark");
    expect(localStorage.getItem("artifactflow.theme")).toBe("dark");
  });

  it("opens the Models screen from a local profile's “Get a model…”, asking first about unsaved changes", async () => {
    const local = { ...DEFAULT_PROFILE, api: "local", base_url: "", model: "gone-model" };
    backend({ get_settings: () => settingsView([local]) });
    const user = userEvent.setup();
    render(<App />);
    await user.click(screen.getByTestId("nav-settings"));
    await expectScreen("Settings");
    await user.click(await screen.findByRole("button", { name: "Edit default" }));
    const form = within(screen.getByRole("form", { name: "Edit default" }));
    expect(await form.findByRole("combobox", { name: "Model" })).toHaveDisplayValue(
      "gone-model (not installed)",
    );

    // A change not saved: leaving asks first, and staying keeps it.
    await user.clear(form.getByLabelText("Profile name"));
    await user.type(form.getByLabelText("Profile name"), "mine");
    await user.click(form.getByRole("button", { name: "Get a model…" }));
    const ask = await screen.findByTestId("leave-dialog");
    expect(ask).toHaveTextContent("The profile “default” has changes that are not saved.");
    await user.click(within(ask).getByRole("button", { name: "Keep editing" }));
    expect(screen.getByRole("heading", { level: 1 })).toHaveTextContent("Settings");
    expect(form.getByLabelText("Profile name")).toHaveValue("mine");

    await user.click(form.getByRole("button", { name: "Get a model…" }));
    await user.click(
      within(await screen.findByTestId("leave-dialog")).getByRole("button", {
        name: "Discard changes",
      }),
    );
    await expectScreen("Models");
    expect(screen.getByTestId("nav-models")).toHaveAttribute("aria-current", "page");
    await waitFor(() => expect(screen.getByRole("heading", { level: 1 })).toHaveFocus());
  });

  it("guides a first run without a usable model, and skipping it sticks", async () => {
    backend({ get_settings: () => settingsView([]) });
    const user = userEvent.setup();
    render(<App />);
    expect(
      await screen.findByRole("heading", { name: "Welcome to ArtifactFlow" }),
    ).toBeInTheDocument();
    await user.click(screen.getByRole("button", { name: /Skip/ }));
    expect(screen.getByRole("heading", { level: 1 })).toHaveTextContent("New conversation");
    expect(localStorage.getItem("artifactflow.setupDone")).toBe("1");
  });

  it("shows the first-run setup in the chat's place only, never above another screen", async () => {
    backend({ get_settings: () => settingsView([]) });
    const user = userEvent.setup();
    render(<App />);
    await screen.findByRole("heading", { name: "Welcome to ArtifactFlow" });
    for (const [nav, title] of [
      ["nav-tools", "Tools"],
      ["nav-settings", "Settings"],
    ] as const) {
      await user.click(screen.getByTestId(nav));
      const headings = await screen.findAllByRole("heading", { level: 1 });
      expect(headings.map((h) => h.textContent)).toEqual([title]);
    }
    // Back in the chat, the setup (not finished, not skipped) greets the user again.
    await user.click(screen.getByTestId("nav-chat"));
    expect(
      await screen.findByRole("heading", { name: "Welcome to ArtifactFlow" }),
    ).toBeInTheDocument();
    expect(screen.getAllByRole("heading", { level: 1 })).toHaveLength(1);
  });

  describe("while starting", () => {
    /** index.html's own splash, put in the page as the window shows it before the script runs. */
    function showSplash(): HTMLElement {
      const page = new DOMParser().parseFromString(indexHtml, "text/html");
      const splash = page.getElementById("splash");
      if (!splash) throw new Error("index.html has no #splash");
      document.body.prepend(document.adoptNode(splash));
      return splash;
    }
    const splash = () => document.getElementById("splash");
    afterEach(() => splash()?.remove());

    it("covers the window with a busy 'Starting' status until the first screen is the one that stays", async () => {
      let answer: (view: unknown) => void = () => {};
      // A fresh machine: no usable model, so the setup will take the chat's place.
      backend({ get_settings: () => new Promise((resolve) => (answer = resolve)) });
      const shown = showSplash();
      expect(shown).toHaveAttribute("role", "status");
      expect(shown).toHaveAttribute("aria-busy", "true");
      expect(shown).toHaveTextContent("Starting ArtifactFlow…");
      render(<App />);
      // The chat has rendered under it, but the setup is about to replace it: still starting.
      await screen.findByTestId("composer-input");
      expect(splash()).toBe(shown);

      await act(async () => answer(settingsView([])));
      await waitFor(() => expect(splash()).toBeNull());
      expect(
        await screen.findByRole("heading", { name: "Welcome to ArtifactFlow" }),
      ).toBeInTheDocument();
    });

    it("goes once the settings answer, or fail, and at once when the setup was done before", async () => {
      backend();
      showSplash();
      const first = render(<App />);
      await waitFor(() => expect(splash()).toBeNull());
      first.unmount();

      backend({
        get_settings: () => {
          throw { code: "engine_unavailable", message: "no engine" };
        },
      });
      showSplash();
      const failed = render(<App />);
      await waitFor(() => expect(splash()).toBeNull());
      failed.unmount();

      localStorage.setItem("artifactflow.setupDone", "1");
      backend({ get_settings: () => new Promise(() => {}) });
      showSplash();
      render(<App />);
      await waitFor(() => expect(splash()).toBeNull());
    });
  });

  it("asks for the agents and the settings once for every screen, and once more per config reload", async () => {
    const calls = backend({
      list_agents: () => [
        { name: "lead_agent", description: "Lead", model: "default", internal: false },
      ],
    });
    const count = (cmd: string) => calls.filter((c) => c === cmd).length;
    const user = userEvent.setup();
    render(<App />);
    // The chat's agent picker, the first-run check and the composer's model name.
    await waitFor(() =>
      expect(within(screen.getByTestId("agent-picker")).getByRole("option")).toHaveTextContent(
        "lead_agent",
      ),
    );
    // The palette lists the agents too.
    await user.keyboard("{Control>}k{/Control}");
    const input = await screen.findByRole("combobox", { name: /Go to a screen/ });
    await user.type(input, "lead");
    await waitFor(() =>
      expect(within(screen.getByRole("listbox")).getAllByRole("option")[0]).toHaveTextContent(
        "lead_agent",
      ),
    );
    await user.keyboard("{Escape}");
    // Settings shows the profiles.
    await user.click(screen.getByTestId("nav-settings"));
    await expectScreen("Settings");
    expect(await screen.findByTestId("profile-default")).toBeInTheDocument();
    expect(count("list_agents")).toBe(1);
    expect(count("get_settings")).toBe(1);

    // The config folder reloaded: each is asked for again, once.
    await act(() => pushStatus({ status: STATUS }));
    await waitFor(() => expect(count("list_agents")).toBe(2));
    await waitFor(() => expect(count("get_settings")).toBe(2));
  });

  it("reloads the config folder through the backend", async () => {
    const calls = backend();
    const user = userEvent.setup();
    render(<App />);
    await user.click(screen.getByTestId("nav-tools"));
    await user.click(await screen.findByRole("button", { name: "Reload config folder" }));
    await waitFor(() => expect(calls).toContain("reload_config"));
  });
});
