import { screen, waitFor, within } from "@testing-library/react";
import userEvent from "@testing-library/user-event";
import type {
  CatalogView,
  InstalledModel,
  Machine,
  PartialDownload,
  PullProgress,
} from "../../bindings";
import { fakeBackend } from "../../test/fakeBackend";
import { push } from "../../test/pushed";
import { render } from "../../test/render";
import { FirstRunSetup } from "./FirstRunSetup";

const MACHINE: Machine = { total_memory: 8e9, available_memory: 4e9, free_disk: 50e9, cores: 4 };

const CATALOG: CatalogView = {
  machine: MACHINE,
  items: [
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
      min_memory: 5.4e9,
      rank: 2,
      published_check: null,
      about: "Strong.",
      fit: { fit: "tight", reason: "needs 5.4 GB of 8.0 GB memory" },
      installed: false,
      recommended: false,
      check: null,
    },
    {
      id: "qwen3-0.6b",
      name: "Qwen3 0.6B",
      repo: "Qwen/Qwen3-0.6B-GGUF",
      file: "Qwen3-0.6B-Q8_0.gguf",
      params: "0.6B",
      quantization: "Q8_0",
      architecture: "qwen3",
      size: 639e6,
      sha256: null,
      license: "Apache-2.0",
      context: 32768,
      min_memory: 1.6e9,
      rank: 7,
      published_check: null,
      about: "Smallest.",
      fit: { fit: "good", reason: "needs 1.6 GB of 8.0 GB memory" },
      installed: false,
      recommended: true,
      check: null,
    },
  ],
  recommendation: "no model that fits has a tool-use check yet",
};

function installed(name: string): InstalledModel {
  return {
    name,
    file: `${name}.gguf`,
    path: `/data/models/${name}.gguf`,
    size: 639e6,
    info: null,
    error: null,
    template_refused: null,
    tools: null,
    source: null,
    catalog_mismatch: null,
    sha256: null,
    installed_at: null,
    last_used: null,
  };
}

function progress(downloaded: number): PullProgress {
  return {
    file: "Qwen3-0.6B-Q8_0.gguf",
    phase: "downloading",
    downloaded,
    total: 639e6,
    resumed_from: 0,
    bytes_per_sec: 20e6,
    eta_secs: 20,
    attempt: 1,
    note: null,
  };
}

describe("First-run setup: a model on this computer", () => {
  it("downloads the recommended model with progress, then saves a local default profile", async () => {
    let finish: (m: InstalledModel) => void = () => {};
    const models: InstalledModel[] = [];
    const backend = fakeBackend(
      { profiles: [], secret_names: [] },
      {
        models_list: () => ({
          dir: "/data/models",
          installed: models,
          downloads: [],
          machine: MACHINE,
        }),
        models_catalog: () => CATALOG,
        models_pull: () =>
          new Promise<InstalledModel>((resolve) => {
            finish = resolve;
          }),
      },
    );
    const onDone = vi.fn();
    const user = userEvent.setup();
    render(<FirstRunSetup onDone={onDone} />);
    await user.click(await screen.findByRole("radio", { name: /Run a model on this computer/ }));
    const choice = within(await screen.findByTestId("local-choice"));
    expect(choice.getByText("Qwen3 0.6B")).toBeVisible();
    expect(choice.getByText("Recommended")).toBeVisible();
    expect(screen.queryByLabelText(/API key/)).not.toBeInTheDocument();

    await user.click(choice.getByRole("button", { name: "Download Qwen3 0.6B and start" }));
    await waitFor(() => expect(backend.argsOf("models_pull")).toEqual([{ target: "qwen3-0.6b" }]));
    await push({ kind: "model_download", event: progress(319.5e6) });
    expect(
      await choice.findByText("50% · 319.5 MB of 639.0 MB · 20.0 MB/s · 20 s left"),
    ).toBeVisible();
    expect(choice.getByRole("button", { name: "Pause" })).toBeVisible();
    expect(onDone).not.toHaveBeenCalled();

    const model = installed("Qwen3-0.6B-Q8_0");
    models.push(model);
    finish(model);
    await waitFor(() => expect(onDone).toHaveBeenCalledTimes(1));
    expect(backend.argsOf("save_profiles")).toEqual([
      {
        profiles: [
          {
            name: "default",
            api: "local",
            base_url: "",
            model: "Qwen3-0.6B-Q8_0",
            api_key: null,
            tool_calls: "auto",
          },
        ],
      },
    ]);
  });

  it("uses a model already installed, replacing the bundled default profile", async () => {
    const backend = fakeBackend(
      {
        profiles: [
          {
            name: "default",
            api: "openai",
            base_url: "https://api.openai.com/v1",
            model: "gpt-4o-mini",
          },
        ],
        secret_names: [],
      },
      {
        models_list: () => ({
          dir: "/data/models",
          installed: [installed("mine")],
          downloads: [],
          machine: MACHINE,
        }),
        models_catalog: () => CATALOG,
      },
    );
    const onDone = vi.fn();
    const user = userEvent.setup();
    render(<FirstRunSetup onDone={onDone} />);
    await user.click(await screen.findByRole("radio", { name: /Run a model on this computer/ }));
    const use = await screen.findByTestId("local-use-installed");
    expect(use).toBeDisabled();
    await user.click(screen.getByRole("radio", { name: /mine/ }));
    await user.click(use);
    await waitFor(() => expect(onDone).toHaveBeenCalledTimes(1));
    const saved = backend.argsOf("save_profiles")[0]?.profiles as unknown[];
    expect(saved).toHaveLength(1);
    expect(saved[0]).toMatchObject({ name: "default", api: "local", model: "mine" });
    expect(backend.argsOf("models_pull")).toHaveLength(0);
  });

  /** The setup's local choice, with the engine's models library in `library`: its downloads
   * that have not finished (what `models_list` lists), the pulls (each answered by the test)
   * and what `models_remove` was asked. */
  function withLibrary(partials: PartialDownload[] = []) {
    const library = {
      partials,
      installed: [] as InstalledModel[],
      removed: [] as string[],
      /** Ends the pull running: with the installed model, or with an error. */
      finishPull: (() => {}) as (
        result: { ok: InstalledModel } | { error: { code: string; message: string } },
      ) => void,
    };
    const backend = fakeBackend(
      { profiles: [], secret_names: [] },
      {
        models_list: () => ({
          dir: "/data/models",
          installed: library.installed,
          downloads: library.partials,
          machine: MACHINE,
        }),
        models_catalog: () => CATALOG,
        models_pause: () => null,
        models_pull: () =>
          new Promise<InstalledModel>((resolve, reject) => {
            library.finishPull = (r) => ("ok" in r ? resolve(r.ok) : reject(r.error));
          }),
        models_remove: (a) => {
          const name = a.name as string;
          library.removed.push(name);
          library.partials = library.partials.filter((p) => p.file !== name);
          library.installed = library.installed.filter((m) => m.name !== name);
          return {
            removed: [`/data/models/${name}`],
            profiles: [],
            stopped_runs: [],
            runtime_stopped: false,
          };
        },
      },
    );
    return { library, backend };
  }

  const PARTIAL: PartialDownload = {
    file: "Qwen3-0.6B-Q8_0.gguf",
    source: { repo: "Qwen/Qwen3-0.6B-GGUF", revision: "main", file: "Qwen3-0.6B-Q8_0.gguf" },
    downloaded: 319.5e6,
    total: 639e6,
  };

  async function chooseLocal(user: ReturnType<typeof userEvent.setup>) {
    await user.click(await screen.findByRole("radio", { name: /Run a model on this computer/ }));
    return within(await screen.findByTestId("local-choice"));
  }

  it("shows a paused download as the Models screen does: how far, Resume and Discard", async () => {
    const { library, backend } = withLibrary();
    const onDone = vi.fn();
    const user = userEvent.setup();
    render(<FirstRunSetup onDone={onDone} />);
    const choice = await chooseLocal(user);
    await user.click(choice.getByRole("button", { name: "Download Qwen3 0.6B and start" }));
    await push({ kind: "model_download", event: progress(319.5e6) });
    await user.click(await choice.findByRole("button", { name: "Pause" }));
    expect(backend.argsOf("models_pause")).toEqual([{ file: "Qwen3-0.6B-Q8_0.gguf" }]);
    library.partials = [PARTIAL];
    library.finishPull({ error: { code: "paused", message: "download paused" } });

    const row = within(await choice.findByTestId("download-Qwen3-0.6B-Q8_0.gguf"));
    expect(await row.findByText("Paused at 319.5 MB of 639.0 MB")).toBeVisible();
    expect(row.getByRole("progressbar", { name: "Download of Qwen3 0.6B" })).toHaveAttribute(
      "value",
      "319500000",
    );
    expect(row.getByRole("button", { name: "Resume" })).toBeVisible();
    expect(screen.queryByText(/download again to resume/)).not.toBeInTheDocument();
    expect(row.queryByRole("alert")).not.toBeInTheDocument();

    // Discard asks, then removes the part through the engine; the choice is back.
    await user.click(row.getByRole("button", { name: "Discard the download of Qwen3 0.6B" }));
    await user.click(row.getByRole("button", { name: "Discard" }));
    await waitFor(() => expect(library.removed).toEqual(["Qwen3-0.6B-Q8_0.gguf"]));
    await waitFor(() =>
      expect(choice.queryByTestId("download-Qwen3-0.6B-Q8_0.gguf")).not.toBeInTheDocument(),
    );
    expect(choice.getByRole("button", { name: "Download Qwen3 0.6B and start" })).toBeVisible();
    expect(onDone).not.toHaveBeenCalled();
  });

  it("resumes a download left from an earlier start, then starts the chat", async () => {
    const { library, backend } = withLibrary([PARTIAL]);
    const onDone = vi.fn();
    const user = userEvent.setup();
    render(<FirstRunSetup onDone={onDone} />);
    const choice = await chooseLocal(user);
    const row = within(await choice.findByTestId("download-Qwen3-0.6B-Q8_0.gguf"));
    expect(row.getByText("Paused at 319.5 MB of 639.0 MB")).toBeVisible();
    expect(choice.queryByRole("button", { name: /and start$/ })).not.toBeInTheDocument();

    await user.click(row.getByRole("button", { name: "Resume" }));
    await waitFor(() => expect(backend.argsOf("models_pull")).toEqual([{ target: "qwen3-0.6b" }]));
    const model = installed("Qwen3-0.6B-Q8_0");
    library.partials = [];
    library.installed = [model];
    library.finishPull({ ok: model });
    await waitFor(() => expect(onDone).toHaveBeenCalledTimes(1));
    expect(backend.argsOf("save_profiles")[0]?.profiles).toMatchObject([
      { name: "default", api: "local", model: "Qwen3-0.6B-Q8_0" },
    ]);
  });

  it("says why a download could not start, with Try again", async () => {
    const unreachable =
      "cannot reach the Hugging Face Hub (https://huggingface.co): the name huggingface.co " +
      "could not be looked up; check the internet connection and the proxy settings " +
      "(HTTPS_PROXY); HF_ENDPOINT can name a mirror";
    const { library, backend } = withLibrary();
    const user = userEvent.setup();
    render(<FirstRunSetup onDone={vi.fn()} />);
    const choice = await chooseLocal(user);
    await user.click(choice.getByRole("button", { name: "Download Qwen3 0.6B and start" }));
    await waitFor(() => expect(backend.argsOf("models_pull")).toHaveLength(1));
    library.finishPull({ error: { code: "download", message: unreachable } });

    const row = within(await choice.findByTestId("download-Qwen3-0.6B-Q8_0.gguf"));
    expect(await row.findByRole("alert")).toHaveTextContent(unreachable);
    expect(row.getByText("Not started: nothing was downloaded")).toBeVisible();
    await user.click(row.getByRole("button", { name: "Try again" }));
    await waitFor(() => expect(backend.argsOf("models_pull")).toHaveLength(2));
    expect(row.queryByRole("alert")).not.toBeInTheDocument();

    // Discarding a download that never began asks nothing of the engine.
    library.finishPull({ error: { code: "download", message: unreachable } });
    await user.click(
      await row.findByRole("button", { name: "Discard the download of Qwen3 0.6B" }),
    );
    await waitFor(() =>
      expect(choice.queryByTestId("download-Qwen3-0.6B-Q8_0.gguf")).not.toBeInTheDocument(),
    );
    expect(library.removed).toEqual([]);
  });

  it("says what a downloaded file really is when it is not the catalogue's, and asks", async () => {
    const { library, backend } = withLibrary();
    const onDone = vi.fn();
    const user = userEvent.setup();
    render(<FirstRunSetup onDone={onDone} />);
    const choice = await chooseLocal(user);
    const message =
      "This file is a llama model of 1.1 GB, not the Qwen3 0.6B (qwen3, 639.0 MB) the " +
      "catalogue lists";
    const other: InstalledModel = {
      ...installed("Qwen3-0.6B-Q8_0"),
      size: 1.1e9,
      catalog_mismatch: {
        entry: "qwen3-0.6b",
        entry_name: "Qwen3 0.6B",
        expected_architecture: "qwen3",
        expected_size: 639e6,
        architecture: "llama",
        size: 1.1e9,
        message,
      },
    };
    const pullIt = async () => {
      const pulls = backend.argsOf("models_pull").length;
      await user.click(choice.getByRole("button", { name: "Download Qwen3 0.6B and start" }));
      await waitFor(() => expect(backend.argsOf("models_pull")).toHaveLength(pulls + 1));
      library.installed = [other];
      library.finishPull({ ok: other });
      return within(await choice.findByTestId("local-mismatch"));
    };

    // Not used silently: what the file is, and a choice.
    let asked = await pullIt();
    expect(asked.getByRole("note")).toHaveTextContent(message);
    expect(onDone).not.toHaveBeenCalled();
    expect(backend.argsOf("save_profiles")).toHaveLength(0);

    // Deleted: gone through the engine, and the download is offered again.
    await user.click(asked.getByRole("button", { name: "Delete it" }));
    await waitFor(() => expect(library.removed).toEqual(["Qwen3-0.6B-Q8_0"]));
    await waitFor(() => expect(choice.queryByTestId("local-mismatch")).not.toBeInTheDocument());

    // Used anyway: the profile is saved with it.
    asked = await pullIt();
    await user.click(asked.getByRole("button", { name: "Use it anyway and start" }));
    await waitFor(() => expect(onDone).toHaveBeenCalledTimes(1));
    expect(backend.argsOf("save_profiles")[0]?.profiles).toMatchObject([
      { name: "default", api: "local", model: "Qwen3-0.6B-Q8_0" },
    ]);
  });
});
