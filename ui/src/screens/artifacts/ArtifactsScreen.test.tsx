import { render as renderAlone, screen, waitFor, within } from "@testing-library/react";
import { render } from "../../test/render";
import userEvent from "@testing-library/user-event";
import { mockIPC } from "@tauri-apps/api/mocks";
import { ArtifactsScreen } from "./ArtifactsScreen";
import { ArtifactBody, parseCsv, prettyJson } from "./ArtifactBody";
import { localDayStart, nextDay } from "./useLibrary";

const summary = (id: string, title: string, content_type = "text/markdown") => ({
  id,
  conversation_id: "c1",
  title,
  content_type,
  source: "agent",
  version: 2,
  created_at: "2026-11-29T10:00:00Z",
  updated_at: "2026-11-29T11:00:00Z",
  size_chars: 10,
  line_count: 2,
  size_bytes: 10,
  binary: false,
});

/** A tool's image, sound and PDF, stored as binary artifacts. */
const binary = (id: string, content_type: string, size_bytes: number) => ({
  ...summary(id, `${id} from the tool`, content_type),
  source: "tool",
  version: 1,
  size_chars: 0,
  line_count: 0,
  size_bytes,
  binary: true,
});

const CONTENT: Record<number, string> = { 1: "# Plan\nold line\n", 2: "# Plan\nnew line\n" };

function backend() {
  const calls: { cmd: string; args: Record<string, unknown> }[] = [];
  const items = [summary("plan", "The plan"), summary("data", "Data", "text/csv")];
  mockIPC((cmd, args) => {
    const a = (args ?? {}) as Record<string, unknown>;
    calls.push({ cmd, args: a });
    if (cmd === "list_artifacts") {
      const q = (a.query as { query: string | null }).query;
      const found = q
        ? items.filter((i) => i.title.toLowerCase().includes(q.toLowerCase()))
        : items;
      return { items: found, total: found.length };
    }
    if (cmd === "artifact_versions")
      return [1, 2].map((version) => ({
        version,
        size_chars: 9,
        line_count: 2,
        created_at: `t${version}`,
      }));
    if (cmd === "get_artifact_version") {
      const version = (a.version as number | null) ?? 2;
      const isCsv = a.id === "data";
      return {
        id: a.id,
        title: isCsv ? "Data" : "The plan",
        content_type: isCsv ? "text/csv" : "text/markdown",
        version,
        content: isCsv ? 'name,note\nAda,"likes, commas"\n' : CONTENT[version],
      };
    }
    if (cmd === "delete_artifact") return null;
    if (cmd === "list_conversations")
      return [
        {
          id: "c1",
          title: "Research chat",
          agent: "lead_agent",
          updated_at: "2026-11-29T11:00:00Z",
          last_status: "completed",
          always_allowed: [],
        },
      ];
    if (cmd === "export_artifact") return "/home/u/Downloads/plan.md";
    throw new Error(`unexpected ${cmd}`);
  });
  return calls;
}

describe("ArtifactsScreen", () => {
  it("lists, searches, views by type, diffs versions and deletes", async () => {
    const calls = backend();
    const user = userEvent.setup();
    render(<ArtifactsScreen />);
    expect(await screen.findByTestId("artifact-count")).toHaveTextContent("2 artifacts");

    await user.type(screen.getByTestId("artifact-search"), "plan");
    await waitFor(() =>
      expect(screen.getByTestId("artifact-count")).toHaveTextContent("1 artifact"),
    );
    const last = calls.filter((c) => c.cmd === "list_artifacts").at(-1);
    expect(last?.args.query).toMatchObject({ query: "plan" });

    const [first] = screen.getAllByTestId("artifact-item");
    if (!first) throw new Error("no artifact listed");
    await user.click(first);
    const viewer = await screen.findByTestId("library-viewer");
    await waitFor(() =>
      expect(within(viewer).getByRole("heading", { level: 1 })).toHaveTextContent("Plan"),
    );

    await user.click(screen.getByTestId("history-tab"));
    await waitFor(() => expect(screen.getByTestId("diff")).toHaveTextContent("- old line"));
    expect(screen.getByTestId("diff")).toHaveTextContent("+ new line");

    await user.click(within(viewer).getByRole("button", { name: "Delete" }));
    await user.click(screen.getByRole("button", { name: "Delete" }));
    expect(calls.some((c) => c.cmd === "delete_artifact" && c.args.id === "plan")).toBe(true);
  });

  it("shows its empty state where the list would be, also when a search finds nothing", async () => {
    backend();
    const user = userEvent.setup();
    render(<ArtifactsScreen />);
    expect(await screen.findByTestId("artifact-count")).toHaveTextContent("2 artifacts");
    expect(screen.queryByTestId("library-empty")).toBeNull();
    await user.type(screen.getByTestId("artifact-search"), "no such thing");
    const empty = await screen.findByTestId("library-empty");
    expect(empty).toHaveTextContent("Nothing matches.");
    // In the list's own (scrolling, growing) box, not below it.
    expect(empty.parentElement).toBe(screen.getByTestId("artifact-list"));
  });

  it("shows one of the user's sources with its page dividers", async () => {
    const source = {
      ...summary("src_0123456789ab", "Field report"),
      conversation_id: "",
      source: "user" as const,
      version: 1,
    };
    mockIPC((cmd) => {
      if (cmd === "list_artifacts") return { items: [source], total: 1 };
      if (cmd === "artifact_versions") return [];
      if (cmd === "get_artifact_version")
        return {
          id: source.id,
          title: "Field report",
          content_type: "text/markdown",
          version: 1,
          content: "<!-- page 1 -->\n\nDay one.\n<!-- page 2 (ii) -->\n\nThe quokka.\n",
        };
      if (cmd === "list_conversations") return [];
      return null;
    });
    render(<ArtifactsScreen open={source} />);
    const body = await screen.findByTestId("artifact-content");
    await waitFor(() =>
      expect(within(body).getByRole("heading", { name: "Page 2 (ii)" })).toBeInTheDocument(),
    );
    expect(within(body).getByRole("heading", { name: "Page 1" })).toBeInTheDocument();
    expect(body).toHaveTextContent("The quokka.");
    expect(body).not.toHaveTextContent("<!--");
  });

  it("shows a binary image and audio from their bytes, and other binary types as a line", async () => {
    const calls: { cmd: string; args: Record<string, unknown> }[] = [];
    const items = [
      binary("image_1", "image/png", 67),
      binary("audio_1", "audio/wav", 3000),
      binary("file_1", "application/pdf", 2 * 1024 * 1024),
    ];
    mockIPC((cmd, args) => {
      const a = (args ?? {}) as Record<string, unknown>;
      calls.push({ cmd, args: a });
      if (cmd === "list_artifacts") return { items, total: items.length };
      if (cmd === "list_conversations") return [];
      if (cmd === "get_artifact_bytes") {
        const item = items.find((i) => i.id === a.id);
        return {
          id: a.id,
          title: item?.title,
          content_type: item?.content_type,
          binary: true,
          size_bytes: item?.size_bytes,
          base64: a.id === "image_1" ? "iVBORw0KGgo=" : "UklGRg==",
        };
      }
      if (cmd === "export_artifact") return "/home/u/Downloads/image_1.png";
      throw new Error(`unexpected ${cmd}`);
    });
    const user = userEvent.setup();
    render(<ArtifactsScreen />);
    const rows = await screen.findAllByTestId("artifact-item");
    expect(rows.map((r) => r.textContent)).toEqual([
      expect.stringContaining("image/png · tool · v1 · 67 B"),
      expect.stringContaining("audio/wav · tool · v1 · 3 KB"),
      expect.stringContaining("application/pdf · tool · v1 · 2.0 MB"),
    ]);

    await user.click(rows[0] as HTMLElement);
    const image = await screen.findByTestId("binary-image");
    expect(image).toHaveAttribute("src", "data:image/png;base64,iVBORw0KGgo=");
    expect(image).toHaveAttribute("alt", "image_1 from the tool (image/png, 67 B)");
    // Binary content has no text, history or copy; it can be saved.
    expect(screen.queryByTestId("history-tab")).toBeNull();
    expect(calls.some((c) => c.cmd === "get_artifact_version")).toBe(false);
    await user.click(screen.getByRole("button", { name: "Save as…" }));
    expect(await screen.findByTestId("exported")).toHaveTextContent("image_1.png");

    await user.click(rows[1] as HTMLElement);
    const audio = await screen.findByTestId("binary-audio");
    expect(audio).toHaveAttribute("src", "data:audio/wav;base64,UklGRg==");
    expect(audio).toHaveAttribute("controls");

    await user.click(rows[2] as HTMLElement);
    const pdf = await screen.findByTestId("binary-content");
    await waitFor(() => expect(pdf).toHaveAttribute("data-artifact-id", "file_1"));
    expect(pdf).toHaveTextContent("application/pdf · 2.0 MB · file_1");
    expect(pdf.querySelector("img, audio")).toBeNull();
    expect(calls.filter((c) => c.cmd === "get_artifact_bytes").map((c) => c.args.id)).toEqual([
      "image_1",
      "audio_1",
    ]);
  });

  it("filters by conversation and dates, sorts, exports and opens the conversation", async () => {
    const calls = backend();
    const opened: string[] = [];
    const user = userEvent.setup();
    render(<ArtifactsScreen onOpenConversation={(id) => opened.push(id)} />);
    await screen.findByRole("option", { name: "Research chat" });
    await user.selectOptions(screen.getByTestId("artifact-conversation"), "c1");
    await user.type(screen.getByTestId("artifact-from"), "2026-11-01");
    await user.type(screen.getByTestId("artifact-to"), "2026-11-30");
    await user.selectOptions(screen.getByTestId("artifact-sort"), "title");
    await waitFor(() =>
      expect(calls.filter((c) => c.cmd === "list_artifacts").at(-1)?.args.query).toMatchObject({
        conversation_id: "c1",
        // Local days: from the start of Nov 1 to the start of Dec 1, in this machine's zone.
        updated_from: new Date(2026, 10, 1).toISOString(),
        updated_before: new Date(2026, 11, 1).toISOString(),
        sort: "title",
      }),
    );
    const [first] = screen.getAllByTestId("artifact-item");
    if (!first) throw new Error("no artifact listed");
    await user.click(first);
    const viewer = await screen.findByTestId("library-viewer");
    expect(viewer).toHaveTextContent("conversation Research chat");
    await user.click(screen.getByTestId("export-artifact"));
    expect(await screen.findByTestId("exported")).toHaveTextContent(
      "Exported to /home/u/Downloads/plan.md",
    );
    expect(calls.find((c) => c.cmd === "export_artifact")?.args).toMatchObject({
      conversationId: "c1",
      id: "plan",
    });
    await user.click(screen.getByTestId("open-conversation"));
    expect(opened).toEqual(["c1"]);
    await user.click(screen.getByRole("button", { name: "Clear filters" }));
    await waitFor(() =>
      expect(calls.filter((c) => c.cmd === "list_artifacts").at(-1)?.args.query).toMatchObject({
        conversation_id: null,
        updated_from: null,
        updated_before: null,
      }),
    );
  });

  // ArtifactBody talks to no backend: rendered without the app's event provider (whose
  // listeners need the mocked IPC the screen tests set up).
  it("shows JSON as a foldable tree and HTML in a sandboxed frame", async () => {
    const user = userEvent.setup();
    const { unmount } = renderAlone(
      <ArtifactBody contentType="application/json" content='{"a":{"b":[1,"x",null]},"c":true}' />,
    );
    const tree = screen.getByTestId("json-tree");
    const [root, a, b] = tree.querySelectorAll("details");
    expect(root).toHaveAttribute("open");
    expect(a?.querySelector("summary")).toHaveTextContent("a: { 1 keys }");
    expect(b).not.toHaveAttribute("open");
    expect(b?.querySelector("summary")).toHaveTextContent("b: [ 3 items ]");
    await user.click(a?.querySelector("summary") as HTMLElement);
    expect(a).not.toHaveAttribute("open");
    expect(tree).toHaveTextContent("c: true");
    unmount();

    renderAlone(
      <ArtifactBody
        contentType="text/html"
        content={
          '<meta http-equiv="refresh" content="0;url=https://x.test/"><h1>Hi</h1>' +
          '<a href="https://x.test/away">away</a><a href="#part">jump</a>' +
          '<script>parent.hacked = 1</script><img src="https://x.test/a.png" onerror="parent.hacked = 2">'
        }
      />,
    );
    const frame = screen.getByTestId("html-frame");
    // No allow-scripts, forms, popups or top navigation; a CSP of its own blocks all loads.
    expect(frame.getAttribute("sandbox")).toBe("allow-same-origin");
    expect(frame.getAttribute("srcdoc")).toMatch(
      /^<meta http-equiv="Content-Security-Policy" content="default-src 'none'/,
    );
    const srcdoc = frame.getAttribute("srcdoc") ?? "";
    expect(srcdoc).toContain("<h1>Hi</h1>");
    expect(srcdoc).not.toMatch(/refresh|<script|onerror|x\.test\/away/);
    expect(srcdoc).toContain('href="#part"');
    await user.click(screen.getByRole("button", { name: "Show source" }));
    expect(screen.getByText(/parent.hacked/)).toBeInTheDocument();
    expect(nextDay("2026-12-31")).toBe("2027-01-01");
    expect(localDayStart("2026-03-09")).toBe(new Date(2026, 2, 9).toISOString());
  });

  it("highlights code, escaping what it shows", () => {
    renderAlone(
      <ArtifactBody
        contentType="text/x-python"
        content={'def f():\n    return "<img src=x onerror=alert(1)>"\n'}
      />,
    );
    const code = screen.getByTestId("code-view");
    expect(code.querySelector(".hljs-keyword")).toHaveTextContent("def");
    expect(code.querySelector("img")).toBeNull();
    expect(code).toHaveTextContent('return "<img src=x onerror=alert(1)>"');
  });

  it("renders CSV as a table and pretty-prints JSON", () => {
    expect(parseCsv('a,b\r\n1,"x, ""y"""\n')).toEqual([
      ["a", "b"],
      ["1", 'x, "y"'],
    ]);
    expect(prettyJson('{"a":[1,2]}')).toBe('{\n  "a": [\n    1,\n    2\n  ]\n}');
    expect(prettyJson("not json")).toBe("not json");
  });
});
