import { screen, waitFor, within } from "@testing-library/react";
import userEvent from "@testing-library/user-event";
import { mockIPC } from "@tauri-apps/api/mocks";
import type { Added, Progress } from "../../bindings";
import { push } from "../../test/pushed";
import { render } from "../../test/render";
import { AddSources } from "./AddSources";

function backend() {
  const state: { calls: { cmd: string; args: unknown }[]; finish: (added: Added | null) => void } =
    { calls: [], finish: () => {} };
  mockIPC((cmd, args) => {
    state.calls.push({ cmd, args });
    if (cmd === "library_add")
      return new Promise((resolve) => {
        state.finish = resolve;
      });
    if (cmd === "library_cancel") return null;
    return null;
  });
  return state;
}

const progress = (over: Partial<Progress>): Progress => ({
  files_done: 0,
  files_total: 4,
  pages: 0,
  bytes_done: 0,
  bytes_total: 4 * 1024 * 1024,
  finished: null,
  current: null,
  ...over,
});

const ADDED: Added = {
  notices: ["An add interrupted on 6 Dec was rolled back: 2 files were not added."],
  summary: {
    job_id: "j1",
    status: "cancelled",
    files_total: 4,
    added: 1,
    new_versions: 0,
    duplicates: 1,
    failed: 1,
    cancelled: 1,
    pages: 12,
    bytes_total: 4 * 1024 * 1024,
    seconds: 3,
    files: [
      { path: "/in/report.pdf", status: "added", id: "src_0123456789ab", pages: 10 },
      { path: "/in/copy.pdf", status: "duplicate", id: "src_0123456789ab" },
      {
        path: "/in/locked.pdf",
        status: "failed",
        error_kind: "encrypted",
        message: "the PDF is encrypted: it needs a password",
      },
      { path: "/in/late.md", status: "cancelled" },
    ],
  },
};

describe("AddSources", () => {
  it("adds a folder with progress, cancels, and lists what failed and why", async () => {
    const be = backend();
    const added: number[] = [];
    const user = userEvent.setup();
    render(<AddSources onAdded={() => added.push(1)} />);
    await user.click(screen.getByRole("button", { name: "Add folder…" }));
    await waitFor(() =>
      expect(be.calls.find((c) => c.cmd === "library_add")?.args).toEqual({
        paths: null,
        folder: true,
      }),
    );
    expect(screen.getByRole("button", { name: "Add files…" })).toBeDisabled();
    expect(screen.getByTestId("ingest-progress")).toHaveTextContent("Looking for files…");
    await push({
      kind: "library_ingest",
      event: progress({
        files_done: 1,
        pages: 10,
        bytes_done: 1024 * 1024,
        current: "/in/copy.pdf",
      }),
    });
    expect(await screen.findByTestId("ingest-files")).toHaveTextContent("1 of 4 files");
    const panel = within(screen.getByTestId("ingest-progress"));
    expect(screen.getByTestId("ingest-progress")).toHaveTextContent("10 pages · 1.0 MB of 4.0 MB");
    expect(panel.getByText("Reading copy.pdf")).toBeInTheDocument();
    expect(panel.getByRole("progressbar", { name: "Adding files" })).toHaveAttribute(
      "value",
      String(1024 * 1024),
    );

    await user.click(panel.getByRole("button", { name: "Cancel" }));
    expect(be.calls.some((c) => c.cmd === "library_cancel")).toBe(true);
    expect(panel.getByRole("button", { name: "Cancelling…" })).toBeDisabled();

    be.finish(ADDED);
    const summary = await screen.findByTestId("ingest-summary");
    expect(screen.queryByTestId("ingest-progress")).toBeNull();
    expect(within(summary).getByTestId("ingest-counts")).toHaveTextContent(
      "1 added · 1 already in the library · 1 failed · 1 not added (cancelled)",
    );
    expect(summary).toHaveTextContent("Cancelled:");
    expect(summary).toHaveTextContent("An add interrupted on 6 Dec was rolled back");
    expect(within(summary).getByTestId("ingest-failures")).toHaveTextContent(
      "locked.pdf: the PDF is encrypted: it needs a password",
    );
    expect(added).toEqual([1]);
    expect(screen.getByRole("button", { name: "Add files…" })).toBeEnabled();
  });

  it("a cancelled dialog adds nothing and says nothing", async () => {
    const be = backend();
    const added: number[] = [];
    const user = userEvent.setup();
    render(<AddSources onAdded={() => added.push(1)} />);
    await user.click(screen.getByRole("button", { name: "Add files…" }));
    await waitFor(() => expect(be.calls.some((c) => c.cmd === "library_add")).toBe(true));
    be.finish(null);
    await waitFor(() => expect(screen.getByRole("button", { name: "Add files…" })).toBeEnabled());
    expect(screen.queryByTestId("ingest-summary")).toBeNull();
    expect(added).toEqual([]);
  });
});
