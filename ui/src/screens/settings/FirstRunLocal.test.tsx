import { screen, waitFor, within } from "@testing-library/react";
import userEvent from "@testing-library/user-event";
import type { CatalogView, InstalledModel, Machine, PullProgress } from "../../bindings";
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
});
