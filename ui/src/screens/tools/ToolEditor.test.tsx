import { act, fireEvent, screen, waitFor, within } from "@testing-library/react";
import { render } from "../../test/render";
import userEvent from "@testing-library/user-event";
import { closeHeld, pushCloseRequest, pushStatus } from "../../test/pushed";
import { mockIPC, mockWindows } from "@tauri-apps/api/mocks";
import example from "../../../../config/tools/_example.md?raw";
import type { ToolCheck } from "../../bindings";
import { LeaveGuardProvider } from "../../shell/leaveGuard";
import { ToolEditor } from "./ToolEditor";
import { ToolsScreen } from "./ToolsScreen";

const PATH = "/c/tools/query_stock_price.md";

/** A stand-in for the backend's loader: flags an unknown method at its line, like `check`. */
function check(text: string): ToolCheck {
  const lines = text.split("\n");
  const bad = lines.findIndex((l) => /^method: (FETCH|fetch)/.test(l));
  if (bad >= 0) {
    return {
      name: null,
      errors: [
        { file: PATH, line: bad + 1, field: "method", message: "unknown HTTP method `FETCH`" },
      ],
      instructions: null,
      secrets: [],
      permission: null,
    };
  }
  return {
    name: "query_stock_price",
    errors: [],
    instructions: '<tool name="query_stock_price">…</tool>',
    secrets: [{ name: "STOCK_API_KEY", found_in: null }],
    permission: "confirm",
  };
}

type Args = Record<string, unknown>;

function backend(disk: { text: string }) {
  const saves: Args[] = [];
  mockIPC((cmd, args) => {
    const a = (args ?? {}) as Args;
    if (cmd === "check_tool_draft") return check(a.text as string);
    if (cmd === "read_config_file")
      return { path: PATH, file_name: "query_stock_price.md", enabled: true, text: disk.text };
    if (cmd === "save_config_file") {
      saves.push(a);
      if (a.base !== null && a.base !== disk.text) {
        throw {
          code: "conflict",
          message: `${PATH} was changed outside the editor since you opened it`,
        };
      }
      disk.text = a.text as string;
      return { path: PATH, file_name: "query_stock_price.md", enabled: true, text: disk.text };
    }
    throw new Error(`unexpected ${cmd}`);
  });
  return saves;
}

function renderEditor(text = example) {
  return render(
    <LeaveGuardProvider>
      <ToolEditor opened={{ path: PATH, text }} onClose={() => {}} />
    </LeaveGuardProvider>,
  );
}

const raw = () => screen.getByTestId<HTMLTextAreaElement>("tool-raw");

describe("ToolEditor", () => {
  it("keeps the form and the Markdown in sync both ways", async () => {
    backend({ text: example });
    const user = userEvent.setup();
    renderEditor();
    // Form → Markdown: the one field changes; comments elsewhere stay.
    await user.selectOptions(screen.getByTestId("tool-method"), "GET");
    await user.clear(screen.getByTestId("tool-timeout"));
    await user.type(screen.getByTestId("tool-timeout"), "45");
    await user.click(screen.getByRole("button", { name: "Add parameter" }));
    await user.type(screen.getByLabelText("Parameter 3 name"), "days");
    await user.selectOptions(screen.getByLabelText("Parameter 3 type"), "integer");
    await user.type(screen.getByLabelText("Parameter 3 default"), "7");
    await user.click(screen.getByTestId("tab-markdown"));
    expect(raw().value).toMatch(/\nmethod: GET +# default GET/);
    expect(raw().value).toContain("timeout: 45");
    expect(raw().value).toMatch(/- name: days\n\s+type: integer[\s\S]*default: 7/);
    expect(raw().value).toContain("Use this when the user asks about current stock prices");
    expect(screen.getByTestId("unsaved")).toBeInTheDocument();

    // Markdown → form.
    fireEvent.change(raw(), {
      target: {
        value: raw()
          .value.replace("timeout: 45", "timeout: 12")
          .replace("method: GET", "method: PUT"),
      },
    });
    await user.click(screen.getByTestId("tab-form"));
    expect(screen.getByTestId<HTMLInputElement>("tool-timeout").value).toBe("12");
    expect(screen.getByTestId<HTMLSelectElement>("tool-method").value).toBe("PUT");
    expect(screen.getByLabelText<HTMLInputElement>("Parameter 3 name").value).toBe("days");
  });

  it("shows and sets where each parameter is sent, and its JSON flag", async () => {
    backend({ text: example });
    const user = userEvent.setup();
    renderEditor();
    const sentIn = screen.getByLabelText<HTMLSelectElement>("Parameter 1 sent in");
    // POST: the default is the body.
    expect(sentIn).toHaveDisplayValue("Default (body)");
    expect(sentIn).toHaveAccessibleDescription(/Default is the JSON body for POST/);
    await user.selectOptions(sentIn, "Path");
    await user.click(screen.getByLabelText("Parameter 2 JSON"));
    await user.click(screen.getByTestId("tab-markdown"));
    expect(raw().value).toMatch(/- name: symbol\n[\s\S]*?\n\s+in: path\n[\s\S]*?- name: market/);
    expect(raw().value).toMatch(/- name: market\n[\s\S]*\n\s+json: true\n/);
    // Back to the default: the key goes.
    await user.click(screen.getByTestId("tab-form"));
    await user.selectOptions(screen.getByLabelText("Parameter 1 sent in"), "Default (body)");
    await user.click(screen.getByTestId("tab-markdown"));
    expect(raw().value).not.toContain("in: path");
    // The JSON box is only there for string parameters.
    await user.click(screen.getByTestId("tab-form"));
    await user.click(screen.getByLabelText("Parameter 2 JSON"));
    await user.selectOptions(screen.getByLabelText("Parameter 2 type"), "integer");
    expect(screen.queryByLabelText("Parameter 2 JSON")).toBeNull();
  });

  it("lays each parameter out in two rows that fit the form: four narrow columns, then the rest on a wrapping line", async () => {
    backend({ text: example });
    renderEditor();
    const table = screen.getByRole("table");
    expect(
      within(table)
        .getAllByRole("columnheader")
        .map((h) => h.textContent),
    ).toEqual(["Name", "Type", "Required", "Default", "Actions"]);
    const first = screen.getByTestId("param-row-0");
    const second = first.nextElementSibling as HTMLElement;
    for (const field of ["name", "type", "required", "default"]) {
      expect(first).toContainElement(screen.getByLabelText(`Parameter 1 ${field}`));
    }
    expect(first).toContainElement(screen.getByRole("button", { name: "Remove parameter symbol" }));
    for (const field of ["description", "allowed values", "sent in", "JSON"]) {
      expect(second).toContainElement(screen.getByLabelText(`Parameter 1 ${field}`));
    }
    expect(second.querySelector("td")).toHaveAttribute("colspan", "5");
  });

  it("shows an imported tool's path parameter as Path, and an unknown place as written", async () => {
    const imported = [
      "---",
      "# Imported from petstore.yaml: GET /pets/{petId}",
      "name: getPetById",
      "description: Find a pet by id",
      'endpoint: "https://petstore.example/v2/pets/{petId}"',
      "parameters:",
      "  - name: petId",
      "    type: integer",
      "    description: ID of the pet",
      "    in: path",
      "  - name: X-Trace",
      "    type: string",
      "    in: cookie",
      "---",
      "",
    ].join("\n");
    backend({ text: imported });
    renderEditor(imported);
    const sentIn = screen.getByLabelText<HTMLSelectElement>("Parameter 1 sent in");
    expect(sentIn.value).toBe("path");
    expect(sentIn).toHaveDisplayValue("Path");
    // GET: the default is the query string.
    expect(within(sentIn).getByRole("option", { name: "Default (query)" })).toBeInTheDocument();
    expect(screen.getByLabelText("Parameter 2 sent in")).toHaveDisplayValue("cookie (unknown)");
    expect(screen.queryByLabelText("Parameter 1 JSON")).toBeNull();
  });

  it("shows the backend's errors at the field and by line, and blocks saving", async () => {
    backend({ text: example });
    const user = userEvent.setup();
    renderEditor();
    expect(await screen.findByTestId("no-problems")).toBeInTheDocument();
    expect(screen.getByTestId("secret-refs")).toHaveTextContent(
      "STOCK_API_KEY missing: add it in Settings",
    );
    await user.click(screen.getByTestId("tab-markdown"));
    fireEvent.change(raw(), {
      target: { value: example.replace("method: POST", "method: FETCH") },
    });
    const problems = await screen.findByTestId("problems");
    expect(problems).toHaveTextContent("line 10 method: unknown HTTP method `FETCH`");
    expect(screen.getByTestId("save-tool")).toBeDisabled();
    await user.click(screen.getByTestId("tab-form"));
    expect(screen.getByTestId("tool-method")).toHaveAttribute("aria-invalid", "true");
    expect(screen.getByTestId("tool-form")).toHaveTextContent("unknown HTTP method `FETCH`");
    // A YAML syntax error: the form explains, the line is given.
    await user.click(screen.getByTestId("tab-markdown"));
    fireEvent.change(raw(), {
      target: { value: example.replace("  - name: market", "  - name: [market") },
    });
    await user.click(screen.getByTestId("tab-form"));
    expect(screen.getByText(/The Markdown does not parse/)).toBeInTheDocument();
    expect(
      within(screen.getByTestId("problems")).getByRole("button", { name: /line \d+/ }),
    ).toBeInTheDocument();
  });

  it("keeps the test panel's fields in step with the named parameters: no nameless ghost after adding two and removing one", async () => {
    backend({ text: example });
    const user = userEvent.setup();
    renderEditor();
    const panel = await screen.findByTestId("test-panel");
    const fields = () => [...panel.querySelectorAll("[data-testid^='test-param-']")];
    await waitFor(() =>
      expect(fields().map((f) => f.getAttribute("data-testid"))).toEqual([
        "test-param-symbol",
        "test-param-market",
      ]),
    );
    await user.type(screen.getByTestId("test-param-symbol"), "AAPL");
    await user.click(screen.getByRole("button", { name: "Add parameter" }));
    await user.click(screen.getByRole("button", { name: "Add parameter" }));
    await user.click(screen.getByRole("button", { name: "Remove parameter 3" }));
    expect(screen.getAllByLabelText(/^Parameter \d+ name$/)).toHaveLength(3);
    // A parameter without a name cannot be sent: it has no field, and nothing is left behind.
    await waitFor(() =>
      expect(fields().map((f) => f.getAttribute("data-testid"))).toEqual([
        "test-param-symbol",
        "test-param-market",
      ]),
    );
    expect(panel.querySelectorAll(".test-param")).toHaveLength(2);
    // Named, it gets its field; the value typed for another parameter stays with it.
    await user.type(screen.getByLabelText("Parameter 3 name"), "days");
    await waitFor(() =>
      expect(fields().map((f) => f.getAttribute("data-testid"))).toEqual([
        "test-param-symbol",
        "test-param-market",
        "test-param-days",
      ]),
    );
    expect(screen.getByTestId("test-param-symbol")).toHaveValue("AAPL");
  });

  it("clears a test result once the tool changes (no stale result beside another version)", async () => {
    const tested: string[] = [];
    mockIPC((cmd, args) => {
      const a = (args ?? {}) as Args;
      if (cmd === "check_tool_draft") return check(a.text as string);
      if (cmd === "test_tool_draft") {
        tested.push(a.text as string);
        return {
          success: true,
          output: "187.5",
          formatted: "187.5",
          params: { symbol: "AAPL" },
          exchange: null,
          duration_ms: 12,
        };
      }
      throw new Error(`unexpected ${cmd}`);
    });
    const user = userEvent.setup();
    renderEditor();
    await user.type(await screen.findByTestId("test-param-symbol"), "AAPL");
    await waitFor(() => expect(screen.getByTestId("run-test")).toBeEnabled());
    await user.click(screen.getByTestId("run-test"));
    expect(await screen.findByTestId("test-output")).toHaveTextContent("187.5");
    // The tool loses its parameters: the old result, for the old tool, goes.
    await user.click(screen.getByTestId("tab-markdown"));
    fireEvent.change(raw(), {
      target: { value: example.replace(/^parameters:[\s\S]*?^---$/m, "---") },
    });
    expect(await screen.findByText("This tool has no parameters.")).toBeInTheDocument();
    expect(screen.queryByTestId("test-result")).toBeNull();
    expect(tested).toHaveLength(1);
  });

  it("saves against the text it opened, and offers a reload when the disk changed", async () => {
    const disk = { text: example };
    const saves = backend(disk);
    const user = userEvent.setup();
    renderEditor();
    await user.clear(screen.getByTestId("tool-timeout"));
    await user.type(screen.getByTestId("tool-timeout"), "9");
    await screen.findByTestId("no-problems");
    await user.click(screen.getByTestId("save-tool"));
    await waitFor(() => expect(saves).toHaveLength(1));
    expect(saves[0]).toMatchObject({ kind: "tool", path: PATH, base: example });
    expect(disk.text).toContain("timeout: 9");
    expect(screen.queryByTestId("unsaved")).toBeNull();

    // Someone edits the file while the editor has unsaved changes.
    await user.type(screen.getByTestId("tool-description"), "!");
    disk.text = disk.text.replace("timeout: 9", "timeout: 77");
    await act(() => pushStatus({}));
    const banner = await screen.findByTestId("external-change");
    expect(banner).toHaveTextContent("changed outside the app");
    await user.click(screen.getByTestId("reload-from-disk"));
    expect(screen.getByTestId<HTMLInputElement>("tool-timeout").value).toBe("77");
    expect(screen.queryByTestId("unsaved")).toBeNull();

    // Without unsaved changes, an outside edit simply shows up.
    disk.text = disk.text.replace("timeout: 77", "timeout: 78");
    await act(() => pushStatus({}));
    await waitFor(() =>
      expect(screen.getByTestId<HTMLInputElement>("tool-timeout").value).toBe("78"),
    );
    expect(screen.getByTestId("editor-notice")).toHaveTextContent("changed outside the app");
  });

  it("keeps the file's full path one 'Show file' away, as the agents screen does", async () => {
    const saves = backend({ text: example });
    const user = userEvent.setup();
    renderEditor();
    const editor = screen.getByTestId("tool-editor");
    const header = editor.querySelector("header");
    if (!header) throw new Error("the editor has a header");
    const file = within(header).getByTestId("show-file");
    expect(file.tagName).toBe("DETAILS");
    expect(file).not.toHaveAttribute("open");
    expect(within(file).getByText("Show file").tagName).toBe("SUMMARY");
    expect(within(file).getByText(PATH).tagName).toBe("CODE");
    // Nowhere else in the header.
    expect(within(header).getAllByText(PATH, { exact: false })).toHaveLength(1);
    await user.click(within(file).getByText("Show file"));
    expect(file).toHaveAttribute("open");

    // Saving names the file, not its whole path.
    await user.clear(screen.getByTestId("tool-timeout"));
    await user.type(screen.getByTestId("tool-timeout"), "9");
    await screen.findByTestId("no-problems");
    await user.click(screen.getByTestId("save-tool"));
    await waitFor(() => expect(saves).toHaveLength(1));
    const notice = await screen.findByTestId("editor-notice");
    expect(notice).toHaveTextContent("Saved to query_stock_price.md; it is live.");
    expect(notice).not.toHaveTextContent("/c/tools");
  });
});

describe("closing the window with unsaved changes", () => {
  it("asks first, and closes only on discard", async () => {
    mockWindows("main");
    const calls: string[] = [];
    mockIPC((cmd, args) => {
      calls.push(cmd);
      if (cmd === "check_tool_draft") return check((args as Args).text as string);
      return null;
    });
    const user = userEvent.setup();
    renderEditor();
    // Nothing unsaved: the backend closes the window itself.
    expect(closeHeld()).toBe(false);
    await act(() => pushCloseRequest());
    expect(screen.queryByTestId("leave-dialog")).toBeNull();
    await user.type(screen.getByTestId("tool-description"), "!");
    // Unsaved: closing is held for the editor to ask.
    await waitFor(() => expect(closeHeld()).toBe(true));
    await act(() => pushCloseRequest());
    expect(await screen.findByTestId("leave-dialog")).toBeInTheDocument();
    expect(calls).not.toContain("plugin:window|destroy");
    await user.click(screen.getByRole("button", { name: "Keep editing" }));
    expect(calls).not.toContain("plugin:window|destroy");
    await act(() => pushCloseRequest());
    await user.click(await screen.findByRole("button", { name: "Discard changes" }));
    await waitFor(() => expect(calls).toContain("plugin:window|destroy"));
  });
});

describe("Tools page editing", () => {
  it("asks before discarding unsaved changes", async () => {
    mockIPC((cmd, args) => {
      if (cmd === "list_tools" || cmd === "list_config_files" || cmd === "mcp_servers") return [];
      if (cmd === "tool_template") return example;
      if (cmd === "check_tool_draft") return check((args as Args).text as string);
      throw new Error(`unexpected ${cmd}`);
    });
    const user = userEvent.setup();
    render(
      <LeaveGuardProvider>
        <ToolsScreen
          state={{ status: null, error: null, loading: false, reload: async () => {} }}
        />
      </LeaveGuardProvider>,
    );
    await user.click(screen.getByTestId("new-tool"));
    expect(await screen.findByTestId("tool-editor")).toHaveTextContent("Not saved yet");
    await user.clear(screen.getByTestId("tool-name"));
    await user.type(screen.getByTestId("tool-name"), "weather_now");
    await user.click(screen.getByTestId("close-editor"));
    expect(screen.getByTestId("leave-dialog")).toHaveTextContent("has changes that are not saved");
    await user.click(screen.getByRole("button", { name: "Keep editing" }));
    expect(screen.getByTestId<HTMLInputElement>("tool-name").value).toBe("weather_now");
    await user.click(screen.getByTestId("close-editor"));
    await user.click(screen.getByRole("button", { name: "Discard changes" }));
    expect(screen.queryByTestId("tool-editor")).toBeNull();
    expect(screen.getByTestId("new-tool")).toBeInTheDocument();

    // Discarding by opening a new tool again starts over, and the guard stays armed.
    await user.click(screen.getByTestId("new-tool"));
    await user.type(await screen.findByTestId("tool-description"), "?");
    await user.click(screen.getByRole("button", { name: "← All tools" }));
    await user.click(screen.getByRole("button", { name: "Discard changes" }));
    await user.click(screen.getByTestId("new-tool"));
    expect((await screen.findByTestId<HTMLInputElement>("tool-name")).value).toBe(
      "query_stock_price",
    );
    await user.type(screen.getByTestId("tool-description"), "!");
    await user.click(screen.getByTestId("close-editor"));
    expect(screen.getByTestId("leave-dialog")).toBeInTheDocument();
  });
});
