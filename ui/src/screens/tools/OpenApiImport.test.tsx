import { screen, waitFor, within } from "@testing-library/react";
import userEvent from "@testing-library/user-event";
import axe from "axe-core";
import type { ImportedTool, OpenApiImport, ToolCheck } from "../../bindings";
import { fakeBackend } from "../../test/fakeBackend";
import { render } from "../../test/render";
import { LeaveGuardProvider } from "../../shell/leaveGuard";
import { ToolsScreen } from "./ToolsScreen";

type Args = Record<string, unknown>;

const toolText = (name: string, endpoint: string) => `---
name: ${name}
description: "${name} via the GitHub API"
type: http
endpoint: "${endpoint}"
method: GET
headers:
  Authorization: "Bearer {{GITHUB_TOKEN}}"
---

Calls ${endpoint}.
`;

function tool(
  name: string,
  operation: string,
  summary: string,
  tags: string[],
  more: Partial<ImportedTool> = {},
): ImportedTool {
  return {
    name,
    file_name: `${name}.md`,
    text: toolText(name, `https://api.github.com${operation.split(" ")[1]}`),
    operation,
    summary,
    tags,
    secrets: ["GITHUB_TOKEN"],
    exists: false,
    ...more,
  };
}

const IMPORT: OpenApiImport = {
  title: "GitHub REST API",
  total: 5,
  tools: [
    tool("repos_list", "GET /user/repos", "List repositories for the user", ["repos"]),
    tool("repos_get", "GET /repos/{owner}/{repo}", "Get a repository", ["repos"]),
    tool("issues_list", "GET /issues", "List issues assigned to you", ["issues"], {
      secrets: [],
    }),
    tool("issues_create", "POST /repos/{owner}/{repo}/issues", "Create an issue", ["issues"], {
      exists: true,
    }),
  ],
  skipped: [{ operation: "repos/upload (POST /upload)", reason: "the body is not JSON" }],
};

/** The backend's loader, as far as the editor needs it. */
const check = (text: string): ToolCheck => ({
  name: /^name: (.*)$/m.exec(text)?.[1] ?? null,
  errors: [],
  instructions: "<tool>…</tool>",
  secrets: [],
  permission: "confirm",
});

function setup(overrides: Record<string, (a: Args) => unknown> = {}) {
  const backend = fakeBackend(
    {},
    {
      list_tools: () => [],
      list_config_files: () => [],
      mcp_servers: () => [],
      import_openapi: () => IMPORT,
      check_tool_draft: (a) => check(a.text as string),
      save_config_file: (a) => {
        const name = check(a.text as string).name;
        return {
          path: `/c/tools/${name}.md`,
          file_name: `${name}.md`,
          enabled: true,
          text: a.text,
        };
      },
      ...overrides,
    },
  );
  render(
    <LeaveGuardProvider>
      <ToolsScreen state={{ status: null, error: null, loading: false, reload: async () => {} }} />
    </LeaveGuardProvider>,
  );
  return backend;
}

const URL = "https://api.github.com/openapi.json";

async function readUrl(user: ReturnType<typeof userEvent.setup>) {
  await user.click(screen.getByTestId("import-openapi"));
  expect(screen.getByRole("heading", { name: "Import from OpenAPI" })).toBeInTheDocument();
  await user.type(screen.getByLabelText("Description URL"), URL);
  await user.click(screen.getByTestId("openapi-read"));
  return screen.findByTestId("openapi-result");
}

const rowNames = () =>
  within(screen.getByTestId("openapi-tools"))
    .getAllByRole("checkbox")
    .map((c) => c.closest("li")?.querySelector("label")?.textContent);

describe("Import from OpenAPI", () => {
  it("reads a URL and shows the title, the counts and why operations were skipped", async () => {
    let answer: (v: OpenApiImport) => void = () => {};
    const backend = setup({ import_openapi: () => new Promise((r) => (answer = r)) });
    const user = userEvent.setup();
    await user.click(screen.getByTestId("import-openapi"));
    await user.type(screen.getByLabelText("Description URL"), URL);
    await user.click(screen.getByTestId("openapi-read"));
    expect(await screen.findByRole("button", { name: "Reading…" })).toBeDisabled();
    answer(IMPORT);
    const heading = await screen.findByTestId("openapi-result");
    expect(heading).toHaveTextContent("GitHub REST API: 4 of 5 operations can be tools");
    await waitFor(() => expect(heading).toHaveFocus());
    expect(backend.argsOf("import_openapi")).toEqual([{ source: URL, text: null }]);
    const skipped = screen.getByTestId("openapi-skipped");
    expect(skipped).toHaveTextContent("1 operation can't be imported");
    expect(skipped).toHaveTextContent("repos/upload (POST /upload): the body is not JSON");
    const row = screen.getByTestId("openapi-row-repos_list");
    expect(row).toHaveTextContent("GET /user/repos");
    expect(row).toHaveTextContent("List repositories for the user");
    expect(row).toHaveTextContent("uses {{GITHUB_TOKEN}}");
    expect(row).toHaveTextContent("Settings → Secrets");
    expect(screen.getByTestId("openapi-row-issues_list")).not.toHaveTextContent("uses");
    // No ARIA problem for axe-core (jsdom has no layout: colours are checked by the E2E audit).
    const audit = await axe.run(screen.getByTestId("openapi-import"), {
      runOnly: { type: "tag", values: ["wcag2a", "wcag2aa", "best-practice"] },
      rules: { "color-contrast": { enabled: false }, region: { enabled: false } },
    });
    expect(audit.violations.map((v) => v.id)).toEqual([]);
  });

  it("shows the backend's error", async () => {
    setup({
      import_openapi: () => {
        throw {
          code: "invalid_config",
          message: `${URL}: /paths/~1user~1repos/get: missing "responses"`,
        };
      },
    });
    const user = userEvent.setup();
    await user.click(screen.getByTestId("import-openapi"));
    await user.type(screen.getByLabelText("Description URL"), URL);
    await user.click(screen.getByTestId("openapi-read"));
    expect(await screen.findByRole("alert")).toHaveTextContent(
      `${URL}: /paths/~1user~1repos/get: missing "responses"`,
    );
    expect(screen.queryByTestId("openapi-result")).toBeNull();
    expect(screen.getByTestId("openapi-read")).toBeEnabled();
  });

  it("cancels a read in progress: the backend stops it and no error is shown", async () => {
    let fail: (e: unknown) => void = () => {};
    const backend = setup({
      import_openapi: () => new Promise((_, reject) => (fail = reject)),
      cancel_openapi_import: () => {
        fail({ code: "io", message: "the import was cancelled" });
        return null;
      },
    });
    const user = userEvent.setup();
    await user.click(screen.getByTestId("import-openapi"));
    await user.type(screen.getByLabelText("Description URL"), URL);
    await user.click(screen.getByTestId("openapi-read"));
    expect(await screen.findByRole("button", { name: "Reading…" })).toBeDisabled();
    await user.click(screen.getByTestId("openapi-cancel"));
    await waitFor(() => expect(screen.getByTestId("openapi-read")).toBeEnabled());
    expect(backend.argsOf("cancel_openapi_import")).toHaveLength(1);
    expect(screen.queryByTestId("openapi-cancel")).toBeNull();
    expect(screen.queryByRole("alert")).toBeNull();
    expect(screen.queryByTestId("openapi-result")).toBeNull();
  });

  it("narrows the list by tag and by search", async () => {
    setup();
    const user = userEvent.setup();
    await readUrl(user);
    expect(rowNames()).toEqual(["repos_list", "repos_get", "issues_list", "issues_create"]);
    const tag = screen.getByLabelText("Tag");
    expect(
      within(tag)
        .getAllByRole("option")
        .map((o) => o.textContent),
    ).toEqual(["All tags", "issues", "repos"]);
    await user.selectOptions(tag, "issues");
    expect(rowNames()).toEqual(["issues_list", "issues_create"]);
    await user.selectOptions(tag, "");
    await user.type(screen.getByLabelText("Search"), "REPOSITOR");
    await waitFor(() => expect(rowNames()).toEqual(["repos_list", "repos_get"]));
    await user.clear(screen.getByLabelText("Search"));
    await user.type(screen.getByLabelText("Search"), "post /repos");
    await waitFor(() => expect(rowNames()).toEqual(["issues_create"]));
    await user.selectOptions(tag, "repos");
    expect(await screen.findByText("No operation matches the filter.")).toBeInTheDocument();
  });

  it("renders only the first 200 matching rows", async () => {
    const many = Array.from({ length: 250 }, (_, i) =>
      tool(`op_${i}`, `GET /things/${i}`, `Thing ${i}`, [i % 2 ? "odd" : "even"]),
    );
    setup({ import_openapi: () => ({ ...IMPORT, total: 250, tools: many, skipped: [] }) });
    const user = userEvent.setup();
    await readUrl(user);
    expect(screen.getByTestId("openapi-tools").children).toHaveLength(200);
    expect(screen.getByTestId("openapi-more")).toHaveTextContent(
      "showing 200 of 250; narrow the filter",
    );
    // (By test id: looking up by label text among 200 labelled rows is slow in jsdom.)
    await user.selectOptions(screen.getByTestId("openapi-tag"), "odd");
    expect(screen.getByTestId("openapi-tools").children).toHaveLength(125);
    expect(screen.queryByTestId("openapi-more")).toBeNull();
  });

  it("does not let an existing tool be selected", async () => {
    setup();
    const user = userEvent.setup();
    await readUrl(user);
    const existing = screen.getByRole("checkbox", { name: "issues_create" });
    expect(existing).toBeDisabled();
    expect(screen.getByTestId("openapi-row-issues_create")).toHaveTextContent("already exists");
    await user.click(screen.getByRole("button", { name: "Select all shown" }));
    expect(existing).not.toBeChecked();
    expect(screen.getByTestId("openapi-save")).toHaveTextContent("Save 3 tools");
    await user.click(screen.getByRole("button", { name: "Clear" }));
    expect(screen.getByTestId("openapi-save")).toBeDisabled();
  });

  it("saves each selected tool and reports a failure without stopping the others", async () => {
    let release: () => void = () => {};
    const gate = new Promise<void>((r) => (release = r));
    const backend = setup({
      save_config_file: async (a) => {
        const name = check(a.text as string).name;
        if (name === "repos_list") await gate;
        if (name === "repos_get")
          throw { code: "already_exists", message: "/c/tools/repos_get.md already exists" };
        return {
          path: `/c/tools/${name}.md`,
          file_name: `${name}.md`,
          enabled: true,
          text: a.text,
        };
      },
    });
    const user = userEvent.setup();
    await readUrl(user);
    const save = screen.getByTestId("openapi-save");
    expect(save).toBeDisabled();
    await user.click(screen.getByRole("checkbox", { name: "repos_list" }));
    await user.click(screen.getByRole("checkbox", { name: "repos_get" }));
    await user.click(screen.getByRole("checkbox", { name: "issues_list" }));
    expect(save).toHaveTextContent("Save 3 tools");
    const listed = backend.argsOf("list_config_files").length;
    await user.click(save);
    expect(await screen.findByText("Saving 1 of 3…")).toBeInTheDocument();
    release();
    const report = await screen.findByTestId("openapi-report");
    expect(report).toHaveTextContent("Saved 2 tools: repos_list, issues_list.");
    expect(within(report).getByTestId("openapi-failures")).toHaveTextContent(
      "repos_get: /c/tools/repos_get.md already exists",
    );
    expect(backend.argsOf("save_config_file")).toEqual(
      ["repos_list", "repos_get", "issues_list"].map((n) => ({
        kind: "tool",
        path: null,
        text: IMPORT.tools.find((t) => t.name === n)?.text,
        base: null,
      })),
    );
    // Saved tools now exist; the one that failed stays selected.
    expect(screen.getByRole("checkbox", { name: "repos_list" })).toBeDisabled();
    expect(screen.getByTestId("openapi-row-issues_list")).toHaveTextContent("already exists");
    expect(screen.getByRole("checkbox", { name: "repos_get" })).toBeChecked();
    expect(save).toHaveTextContent("Save 1 tool");
    await waitFor(() => expect(backend.argsOf("list_config_files").length).toBeGreaterThan(listed));
  });

  it("opens a tool in the editor for review and keeps the import when coming back", async () => {
    setup();
    const user = userEvent.setup();
    await readUrl(user);
    await user.selectOptions(screen.getByLabelText("Tag"), "repos");
    await user.type(screen.getByLabelText("Search"), "get a");
    await user.click(screen.getByRole("checkbox", { name: "repos_get" }));
    await user.click(screen.getByTestId("openapi-review-repos_get"));
    expect(await screen.findByTestId<HTMLInputElement>("tool-name")).toHaveValue("repos_get");
    expect(screen.getByTestId("tool-endpoint")).toHaveValue(
      "https://api.github.com/repos/{owner}/{repo}",
    );
    expect(screen.queryByTestId("openapi-import")).toBeNull();
    await user.click(screen.getByRole("button", { name: "← All tools" }));
    expect(await screen.findByTestId("openapi-result")).toHaveTextContent("GitHub REST API");
    expect(screen.getByLabelText("Description URL")).toHaveValue(URL);
    expect(screen.getByLabelText("Tag")).toHaveValue("repos");
    expect(screen.getByLabelText("Search")).toHaveValue("get a");
    expect(rowNames()).toEqual(["repos_get"]);
    expect(screen.getByRole("checkbox", { name: "repos_get" })).toBeChecked();
  });

  it("reads a chosen file: its name is the source, its content the text", async () => {
    const backend = setup();
    const user = userEvent.setup();
    await user.click(screen.getByTestId("import-openapi"));
    const content = "openapi: 3.0.0\ninfo:\n  title: GitHub REST API\n";
    const file = new File([content], "github.yaml", { type: "application/yaml" });
    // jsdom's File has no text() (browsers' and the webviews' have).
    Object.defineProperty(file, "text", { value: async () => content });
    await user.upload(screen.getByLabelText("…or choose a file"), file);
    expect(await screen.findByTestId("openapi-result")).toHaveTextContent("GitHub REST API");
    expect(backend.argsOf("import_openapi")).toEqual([{ source: "github.yaml", text: content }]);
    expect(screen.getByText("github.yaml")).toBeInTheDocument();
  });

  it("closes", async () => {
    setup();
    const user = userEvent.setup();
    await user.click(screen.getByTestId("import-openapi"));
    expect(screen.getByTestId("import-openapi")).toHaveAttribute("aria-expanded", "true");
    await user.click(screen.getByRole("button", { name: "Close" }));
    expect(screen.queryByTestId("openapi-import")).toBeNull();
  });
});
