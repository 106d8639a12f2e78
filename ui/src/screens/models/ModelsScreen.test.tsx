import { screen, waitFor, within } from "@testing-library/react";
import userEvent from "@testing-library/user-event";
import { mockIPC } from "@tauri-apps/api/mocks";
import type {
  CatalogView,
  CheckResult,
  InstalledChecks,
  InstalledModel,
  Machine,
  ModelCheckProgress,
  ModelChecksView,
  ModelsView,
  PullProgress,
  Removal,
} from "../../bindings";
import { installedModel } from "../../test/fakeBackend";
import { dropFocus } from "../../test/focus";
import { push } from "../../test/pushed";
import { render } from "../../test/render";
import { ModelsScreen, progressText } from "./ModelsScreen";

const MACHINE: Machine = {
  total_memory: 16e9,
  available_memory: 8e9,
  free_disk: 100e9,
  cores: 4,
};

const SMOL: InstalledModel = installedModel("SmolLM2-135M-Instruct.Q4_1", {
  path: "/data/models/SmolLM2-135M-Instruct.Q4_1.gguf",
  source: { repo: "HuggingFaceTB/SmolLM2", revision: "main", file: "s.gguf" },
  sha256: "ab".repeat(32),
});

const CATALOG: CatalogView = {
  machine: MACHINE,
  items: [
    {
      id: "qwen3-1.7b",
      name: "Qwen3 1.7B",
      repo: "Qwen/Qwen3-1.7B-GGUF",
      file: "Qwen3-1.7B-Q8_0.gguf",
      params: "1.7B",
      quantization: "Q8_0",
      architecture: "qwen3",
      size: 1.8e9,
      sha256: null,
      license: "Apache-2.0",
      context: 32768,
      min_memory: 3e9,
      rank: 1,
      published_check: null,
      about: "Good tool calls.",
      fit: { fit: "good", reason: "needs 3.0 GB of 16.0 GB memory" },
      installed: false,
      recommended: true,
      check: {
        as_asked: 180,
        items: 203,
        mode: "native",
        guided: true,
        measured: "on 2 cores",
        here: false,
      },
    },
    {
      id: "qwen3-4b",
      name: "Qwen3 4B",
      repo: "Qwen/Qwen3-4B-GGUF",
      file: "Qwen3-4B-Q4_K_M.gguf",
      params: "4B",
      quantization: "Q4_K_M",
      architecture: "qwen3",
      size: 2.5e9,
      sha256: null,
      license: "Apache-2.0",
      context: 32768,
      min_memory: 20e9,
      rank: 2,
      published_check: null,
      about: "Strong.",
      fit: { fit: "too_big", reason: "needs 20.0 GB of memory, this computer has 16.0 GB" },
      installed: false,
      recommended: false,
      check: null,
    },
  ],
  recommendation: "the best tool-use check of the models that fit",
};

function progress(over: Partial<PullProgress>): PullProgress {
  return {
    file: "Qwen3-1.7B-Q8_0.gguf",
    phase: "downloading",
    downloaded: 0,
    total: 1_800_000_000,
    resumed_from: 0,
    bytes_per_sec: 0,
    eta_secs: null,
    attempt: 1,
    note: null,
    ...over,
  };
}

/** A stored check of SMOL: 71 % of 14 items in native mode, guided, 42 s (3 s an item). */
const NATIVE_GUIDED: CheckResult = {
  id: 7,
  mode: "native",
  guided: true,
  item_set: "built-in",
  totals: {
    items: 14,
    as_asked: 10,
    right_tool: 11,
    valid_calls: 9,
    calls_expected: 10,
    failed: 0,
  },
  by_kind: [
    {
      kind: "one_call",
      items: 8,
      as_asked: 6,
      right_tool: 7,
      valid_calls: 7,
      calls_expected: 8,
      failed: 0,
    },
    {
      kind: "missing_value",
      items: 6,
      as_asked: 4,
      right_tool: 4,
      valid_calls: 0,
      calls_expected: 0,
      failed: 0,
    },
  ],
  seconds: 42,
  finished_at: "2025-06-01T10:00:00Z",
};

function checkProgress(over: Partial<ModelCheckProgress>): ModelCheckProgress {
  return {
    model: SMOL.name,
    mode: "native",
    guided: true,
    phase: "asking",
    done: 0,
    total: 200,
    verdict: null,
    elapsed_secs: 0,
    eta_secs: null,
    error: null,
    ...over,
  };
}

interface Backend {
  calls: { cmd: string; args: Record<string, unknown> }[];
  installed: InstalledModel[];
  /** The stored checks `models_checks` answers, by model. */
  checks: Record<string, Partial<InstalledChecks>>;
  finishPull: (
    result: { ok: InstalledModel } | { error: { code: string; message: string } },
  ) => void;
  finishCheck: (result: CheckResult | null) => void;
  finishImport: (
    result: { ok: InstalledModel | null } | { error: { code: string; message: string } },
  ) => void;
}

function backend(): Backend {
  const state: Backend = {
    calls: [],
    installed: [SMOL],
    checks: {},
    finishPull: () => {},
    finishCheck: () => {},
    finishImport: () => {},
  };
  mockIPC((cmd, args) => {
    state.calls.push({ cmd, args: (args ?? {}) as Record<string, unknown> });
    switch (cmd) {
      case "models_list":
        return {
          dir: "/data/models",
          installed: state.installed,
          downloads: [],
          machine: MACHINE,
        } satisfies ModelsView;
      case "models_catalog":
        return CATALOG;
      case "models_pull":
        return new Promise((resolve, reject) => {
          state.finishPull = (r) => {
            if ("ok" in r) resolve(r.ok);
            else reject(r.error);
          };
        });
      case "models_remove":
        return {
          removed: ["/data/models/SmolLM2-135M-Instruct.Q4_1.gguf"],
          profiles: [],
          stopped_runs: [],
          runtime_stopped: false,
        } satisfies Removal;
      case "models_pause":
      case "models_check_cancel":
        return null;
      case "models_checks":
        return {
          item_count: 200,
          models: state.installed.map((m) => ({
            model: m.name,
            checks: [],
            best: null,
            running: null,
            ...state.checks[m.name],
          })),
        } satisfies ModelChecksView;
      case "models_check_start":
        return new Promise((resolve) => {
          state.finishCheck = resolve;
        });
      case "models_import":
        return new Promise((resolve, reject) => {
          state.finishImport = (r) => {
            if ("ok" in r) resolve(r.ok);
            else reject(r.error);
          };
        });
      case "models_search":
        return [{ id: "bartowski/Qwen3-GGUF", downloads: 1200, likes: 3, gated: false }];
      case "models_files":
        return [
          {
            path: "Qwen3-Q4_K_M.gguf",
            size: 2.5e9,
            sha256: "cd".repeat(32),
            quantization: "Q4_K_M",
            fit: { fit: "good", reason: "fits" },
          },
        ];
      default:
        throw new Error(`unexpected command ${cmd}`);
    }
  });
  return state;
}

describe("Models screen", () => {
  it("lists installed models and the catalogue with fit badges and the recommendation", async () => {
    backend();
    render(<ModelsScreen />);
    const row = within(await screen.findByTestId("model-SmolLM2-135M-Instruct.Q4_1"));
    expect(row.getByText("98.4 MB")).toBeInTheDocument();
    expect(row.getByText("Q4_1")).toBeInTheDocument();
    expect(row.getByText("8,192")).toBeInTheDocument();
    expect(row.getByText("llama")).toBeInTheDocument();
    expect(row.getByText("never")).toBeInTheDocument();
    expect(row.queryByText(/No chat template/)).not.toBeInTheDocument();

    const first = within(screen.getByTestId("catalog-qwen3-1.7b"));
    expect(first.getByText("Recommended")).toBeInTheDocument();
    expect(first.getByText("Fits")).toBeInTheDocument();
    const big = within(screen.getByTestId("catalog-qwen3-4b"));
    expect(big.getByText("Too big")).toBeInTheDocument();
    expect(big.queryByText("Recommended")).not.toBeInTheDocument();
    expect(screen.getByTestId("catalog-check-qwen3-1.7b")).toHaveTextContent(
      "Tool-use check: 88 % of 203 items as asked (native calls, guided), measured on 2 cores",
    );
    expect(screen.getByTestId("catalog-check-qwen3-4b")).toHaveTextContent("not run yet");
    expect(first.getByTestId("catalog-recommendation")).toHaveTextContent(
      "Recommended: the best tool-use check of the models that fit",
    );
    expect(big.queryByTestId("catalog-recommendation")).not.toBeInTheDocument();
    expect(screen.getByText(/16\.0 GB memory, 100\.0 GB free disk, 4 cores/)).toBeInTheDocument();
  });

  it("shows a download's progress from pushed events, pauses it and offers to resume", async () => {
    const be = backend();
    const user = userEvent.setup();
    render(<ModelsScreen />);
    await user.click(await screen.findByRole("button", { name: "Download Qwen3 1.7B" }));
    await waitFor(() =>
      expect(be.calls.find((c) => c.cmd === "models_pull")?.args).toEqual({
        target: "qwen3-1.7b",
      }),
    );
    await push({
      kind: "model_download",
      event: progress({ downloaded: 810_000_000, bytes_per_sec: 12_300_000, eta_secs: 80 }),
    });
    const row = within(await screen.findByTestId("download-Qwen3-1.7B-Q8_0.gguf"));
    expect(row.getByText("45% · 810.0 MB of 1.8 GB · 12.3 MB/s · 1 min 20 s left")).toBeVisible();
    expect(
      row.getByRole("progressbar", { name: "Download of Qwen3-1.7B-Q8_0.gguf" }),
    ).toHaveAttribute("value", "810000000");

    await user.click(row.getByRole("button", { name: "Pause" }));
    expect(be.calls.find((c) => c.cmd === "models_pause")?.args).toEqual({
      file: "Qwen3-1.7B-Q8_0.gguf",
    });
    be.finishPull({ error: { code: "paused", message: "download paused at 810000000" } });
    expect(await row.findByText("Paused at 810.0 MB of 1.8 GB")).toBeVisible();
    expect(row.queryByRole("alert")).not.toBeInTheDocument();

    // Resume pulls the same target again; when it ends the model is listed and the row goes.
    await user.click(row.getByRole("button", { name: "Resume" }));
    await waitFor(() => expect(be.calls.filter((c) => c.cmd === "models_pull")).toHaveLength(2));
    be.installed = [
      SMOL,
      { ...SMOL, name: "Qwen3-1.7B-Q8_0", file: "Qwen3-1.7B-Q8_0.gguf", size: 1.8e9 },
    ];
    be.finishPull({ ok: be.installed[1] as InstalledModel });
    expect(await screen.findByTestId("model-Qwen3-1.7B-Q8_0")).toBeVisible();
    expect(screen.queryByTestId("download-Qwen3-1.7B-Q8_0.gguf")).not.toBeInTheDocument();

    // The last reports may arrive after the pull's answer (events are polled): the check of the
    // sha256 shows again for a moment, and the end takes the row away.
    await push({
      kind: "model_download",
      event: progress({ phase: "verifying", downloaded: 1_800_000_000 }),
    });
    expect(await screen.findByTestId("download-Qwen3-1.7B-Q8_0.gguf")).toBeVisible();
    await push({
      kind: "model_download",
      event: progress({ phase: "done", downloaded: 1_800_000_000 }),
    });
    await waitFor(() =>
      expect(screen.queryByTestId("download-Qwen3-1.7B-Q8_0.gguf")).not.toBeInTheDocument(),
    );
  });

  it("says why a download failed", async () => {
    const be = backend();
    const user = userEvent.setup();
    render(<ModelsScreen />);
    await user.click(await screen.findByRole("button", { name: "Download Qwen3 1.7B" }));
    await waitFor(() => expect(be.calls.some((c) => c.cmd === "models_pull")).toBe(true));
    be.finishPull({
      error: { code: "download", message: "the downloaded file's sha256 is wrong; it was removed" },
    });
    const row = within(await screen.findByTestId("download-Qwen3-1.7B-Q8_0.gguf"));
    expect(await row.findByRole("alert")).toHaveTextContent("sha256 is wrong");
  });

  it("finds GGUF repositories on the Hub and downloads a file of one", async () => {
    const be = backend();
    const user = userEvent.setup();
    render(<ModelsScreen />);
    await user.type(await screen.findByLabelText("Search Hugging Face for GGUF models"), "qwen3");
    await user.click(screen.getByRole("button", { name: "Search" }));
    await user.click(await screen.findByRole("button", { name: "bartowski/Qwen3-GGUF" }));
    await user.click(await screen.findByRole("button", { name: "Download Qwen3-Q4_K_M.gguf" }));
    await waitFor(() =>
      expect(be.calls.find((c) => c.cmd === "models_pull")?.args).toEqual({
        target: "bartowski/Qwen3-GGUF/Qwen3-Q4_K_M.gguf",
      }),
    );
    expect(be.calls.find((c) => c.cmd === "models_search")?.args).toEqual({ query: "qwen3" });

    // While that file downloads, its Download button waits; it comes back once paused.
    const download = screen.getByRole("button", { name: "Download Qwen3-Q4_K_M.gguf" });
    expect(download).toBeDisabled();
    expect(download).toHaveTextContent("Downloading…");
    await push({
      kind: "model_download",
      event: progress({ file: "Qwen3-Q4_K_M.gguf", downloaded: 1e9, total: 2.5e9 }),
    });
    expect(download).toBeDisabled();
    be.finishPull({ error: { code: "paused", message: "download paused at 1000000000" } });
    await waitFor(() => expect(download).toBeEnabled());
    expect(download).toHaveTextContent(/^Download$/);
  });

  it("shows an import running until it ends, then what came of it", async () => {
    const be = backend();
    const user = userEvent.setup();
    render(<ModelsScreen />);
    await screen.findByTestId("model-SmolLM2-135M-Instruct.Q4_1");
    await user.click(screen.getByRole("button", { name: "Import a .gguf file…" }));
    await waitFor(() =>
      expect(be.calls.find((c) => c.cmd === "models_import")?.args).toEqual({ path: null }),
    );
    // Copying and checking gigabytes takes a while: the button waits, and says why.
    const busy = screen.getByRole("button", { name: "Importing…" });
    expect(busy).toBeDisabled();
    // A browser drops the focus of a button being disabled to the body (jsdom does not).
    dropFocus();
    expect(screen.getByTestId("models-import-status")).toHaveTextContent(
      "Importing the model file: copying it into the models folder and checking it…",
    );
    const qwen = {
      ...SMOL,
      name: "Qwen3-1.7B-Q8_0",
      file: "Qwen3-1.7B-Q8_0.gguf",
      size: 1.8e9,
      info: SMOL.info && { ...SMOL.info, architecture: "qwen3" },
    };
    be.installed = [SMOL, qwen];
    be.finishImport({ ok: qwen });
    expect(await screen.findByTestId("model-Qwen3-1.7B-Q8_0")).toBeVisible();
    expect(screen.getByTestId("models-import-status")).toHaveTextContent(
      "Imported Qwen3-1.7B-Q8_0 (1.8 GB, qwen3).",
    );
    expect(screen.getByRole("button", { name: "Import a .gguf file…" })).toBeEnabled();
    // The keyboard's place is given back.
    await waitFor(() =>
      expect(screen.getByRole("button", { name: "Import a .gguf file…" })).toHaveFocus(),
    );

    // Refused: the reason, and the button back.
    await user.click(screen.getByRole("button", { name: "Import a .gguf file…" }));
    await waitFor(() => expect(screen.getByRole("button", { name: "Importing…" })).toBeDisabled());
    be.finishImport({
      error: {
        code: "invalid_config",
        message: "notes.gguf is not a GGUF file: it starts with PK",
      },
    });
    expect(await screen.findByRole("alert")).toHaveTextContent("notes.gguf is not a GGUF file");
    expect(screen.queryByTestId("models-import-status")).not.toBeInTheDocument();
    expect(screen.getByRole("button", { name: "Import a .gguf file…" })).toBeEnabled();

    // The file dialog cancelled: nothing to say.
    await user.click(screen.getByRole("button", { name: "Import a .gguf file…" }));
    be.finishImport({ ok: null });
    await waitFor(() =>
      expect(screen.getByRole("button", { name: "Import a .gguf file…" })).toBeEnabled(),
    );
    expect(screen.queryByTestId("models-import-status")).not.toBeInTheDocument();
    expect(screen.queryByRole("alert")).not.toBeInTheDocument();
  });

  it("notes a model without a chat template, and one whose header does not read", async () => {
    const be = backend();
    be.installed = [
      { ...SMOL, info: SMOL.info && { ...SMOL.info, has_chat_template: false } },
      {
        ...SMOL,
        name: "broken",
        file: "broken.gguf",
        info: null,
        error: "broken.gguf is damaged: the file ends at byte 100 of 100",
      },
    ];
    render(<ModelsScreen />);
    const plain = within(await screen.findByTestId("model-SmolLM2-135M-Instruct.Q4_1"));
    expect(plain.getByRole("note")).toHaveTextContent("No chat template in the file");
    const broken = within(screen.getByTestId("model-broken"));
    expect(broken.getByRole("note")).toHaveTextContent("damaged");
  });

  it("says when the runtime refuses a file's chat template, and why", async () => {
    const be = backend();
    be.installed = [{ ...SMOL, template_refused: "rendering it took more than 512 MB of memory" }];
    render(<ModelsScreen />);
    const row = within(await screen.findByTestId("model-SmolLM2-135M-Instruct.Q4_1"));
    expect(row.getByRole("note")).toHaveTextContent(
      "The runtime refuses this file's chat template (rendering it took more than 512 MB of memory)",
    );
  });

  it("deletes a model after asking", async () => {
    const be = backend();
    const user = userEvent.setup();
    render(<ModelsScreen />);
    await user.click(
      await screen.findByRole("button", { name: "Delete SmolLM2-135M-Instruct.Q4_1" }),
    );
    expect(be.calls.some((c) => c.cmd === "models_remove")).toBe(false);
    be.installed = [];
    await user.click(screen.getByRole("button", { name: "Delete" }));
    await waitFor(() =>
      expect(be.calls.find((c) => c.cmd === "models_remove")?.args).toEqual({
        name: "SmolLM2-135M-Instruct.Q4_1",
      }),
    );
    expect(await screen.findByTestId("no-models")).toBeVisible();
  });

  it("words every phase of a download", () => {
    expect(progressText(progress({ phase: "resolving" }))).toMatch(/size and checksum/);
    expect(progressText(progress({ phase: "verifying" }))).toBe("Checking the sha256 of 1.8 GB…");
    expect(progressText(progress({ phase: "retrying", note: "the server closed it" }))).toBe(
      "the server closed it; trying again…",
    );
  });

  describe("tool-use check", () => {
    const smolRow = async () => within(await screen.findByTestId(`tool-check-${SMOL.name}`));

    it("offers the check of a model never checked, saying the time is measured on the first item", async () => {
      const be = backend();
      render(<ModelsScreen />);
      const row = await smolRow();
      expect(row.getByText("Tool use not checked yet")).toBeVisible();
      expect(row.queryByText(/^Tools /)).not.toBeInTheDocument();
      const button = await row.findByRole("button", { name: `Check tool use of ${SMOL.name}` });
      expect(button).toBeEnabled();
      expect(button).toHaveAccessibleDescription(
        "200 items. The time it takes on this computer is measured on the first item.",
      );
      expect(be.calls.some((c) => c.cmd === "models_check_start")).toBe(false);
    });

    it("starts a check in the mode picked and shows its progress from pushed events", async () => {
      const be = backend();
      const user = userEvent.setup();
      render(<ModelsScreen />);
      const row = await smolRow();
      await user.selectOptions(
        row.getByRole("combobox", { name: `How to ask ${SMOL.name}` }),
        "Native, guided",
      );
      await user.click(await row.findByRole("button", { name: `Check tool use of ${SMOL.name}` }));
      await waitFor(() =>
        expect(be.calls.find((c) => c.cmd === "models_check_start")?.args).toEqual({
          model: SMOL.name,
          mode: "native",
          guided: true,
        }),
      );
      await push({ kind: "model_check", event: checkProgress({ phase: "starting" }) });
      await waitFor(() =>
        expect(row.getByRole("status")).toHaveTextContent(
          "Loading the model and asking the first of 200 items (native, guided)…",
        ),
      );
      await push({
        kind: "model_check",
        event: checkProgress({ done: 12, verdict: "as_asked", elapsed_secs: 36, eta_secs: 564 }),
      });
      await waitFor(() =>
        expect(row.getByRole("status")).toHaveTextContent(
          "Item 12 of 200: as asked · about 9 min left",
        ),
      );
      expect(
        row.getByRole("progressbar", { name: `Tool-use check of ${SMOL.name}` }),
      ).toHaveAttribute("value", "12");
      expect(row.queryByRole("button", { name: /Check tool use/ })).not.toBeInTheDocument();
      expect(row.getByRole("button", { name: `Cancel the check of ${SMOL.name}` })).toBeVisible();
    });

    it("shows the stored score as a badge with the breakdown by kind, and the time from its pace", async () => {
      const be = backend();
      const user = userEvent.setup();
      render(<ModelsScreen />);
      await user.click(
        await (await smolRow()).findByRole("button", { name: `Check tool use of ${SMOL.name}` }),
      );
      await waitFor(() => expect(be.calls.some((c) => c.cmd === "models_check_start")).toBe(true));
      await push({ kind: "model_check", event: checkProgress({ done: 13, total: 14 }) });
      be.checks[SMOL.name] = { checks: [NATIVE_GUIDED], best: NATIVE_GUIDED };
      be.finishCheck(NATIVE_GUIDED);
      const row = await smolRow();
      const badge = await row.findByText("Tools 71 % · native, guided", { selector: ".badge" });
      expect(badge).toHaveAttribute(
        "title",
        "One call: 6 of 8 (75 %)\nA value missing (should ask): 4 of 6 (67 %)",
      );
      expect(row.queryByRole("progressbar")).not.toBeInTheDocument();
      // 42 s for 14 items: 3 s an item, so 10 minutes for the 200 built-in items.
      expect(
        row.getByRole("button", { name: `Check tool use of ${SMOL.name}` }),
      ).toHaveAccessibleDescription("200 items. About 10 minutes on this computer.");
      await user.click(row.getByText("By kind"));
      expect(row.getByText("One call: 6 of 8 (75 %)", { selector: "li" })).toBeVisible();
    });

    it("cancels a running check: nothing is kept and the check is offered again", async () => {
      const be = backend();
      const user = userEvent.setup();
      render(<ModelsScreen />);
      await user.click(
        await (await smolRow()).findByRole("button", { name: `Check tool use of ${SMOL.name}` }),
      );
      await push({ kind: "model_check", event: checkProgress({ done: 12, eta_secs: 564 }) });
      const row = await smolRow();
      await user.click(row.getByRole("button", { name: `Cancel the check of ${SMOL.name}` }));
      expect(be.calls.find((c) => c.cmd === "models_check_cancel")?.args).toEqual({
        model: SMOL.name,
      });
      be.finishCheck(null);
      await push({ kind: "model_check", event: checkProgress({ phase: "cancelled", done: 12 }) });
      await waitFor(() =>
        expect(row.getByRole("status")).toHaveTextContent(
          "Stopped after 12 of 200 items; nothing was kept.",
        ),
      );
      expect(row.getByRole("button", { name: `Check tool use of ${SMOL.name}` })).toBeEnabled();
      expect(row.getByText("Tool use not checked yet")).toBeVisible();
      expect(row.queryByRole("progressbar")).not.toBeInTheDocument();
    });

    it("picks up a check that was running when the screen opened, and says why one failed", async () => {
      const be = backend();
      be.checks[SMOL.name] = { running: checkProgress({ done: 40, eta_secs: 30 }) };
      render(<ModelsScreen />);
      const row = await smolRow();
      await waitFor(() =>
        expect(row.getByRole("status")).toHaveTextContent("Item 40 of 200 · about 30 s left"),
      );
      await push({
        kind: "model_check",
        event: checkProgress({
          phase: "failed",
          done: 40,
          error: "cannot ask the model of profile `smol`: the runtime did not start",
        }),
      });
      expect(await row.findByRole("alert")).toHaveTextContent("the runtime did not start");
      expect(row.getByRole("button", { name: `Check tool use of ${SMOL.name}` })).toBeVisible();
    });

    it("offers the check on the row of a model just downloaded", async () => {
      const be = backend();
      const user = userEvent.setup();
      render(<ModelsScreen />);
      await user.click(await screen.findByRole("button", { name: "Download Qwen3 1.7B" }));
      await waitFor(() => expect(be.calls.some((c) => c.cmd === "models_pull")).toBe(true));
      const qwen = { ...SMOL, name: "Qwen3-1.7B-Q8_0", file: "Qwen3-1.7B-Q8_0.gguf" };
      be.installed = [SMOL, qwen];
      be.finishPull({ ok: qwen });
      const row = within(await screen.findByTestId("tool-check-Qwen3-1.7B-Q8_0"));
      expect(await row.findByText(/^Downloaded: check how well it calls tools/)).toBeVisible();
      expect(row.getByRole("button", { name: "Check tool use of Qwen3-1.7B-Q8_0" })).toBeEnabled();
      expect((await smolRow()).queryByText(/^Downloaded:/)).not.toBeInTheDocument();
    });
  });
});
