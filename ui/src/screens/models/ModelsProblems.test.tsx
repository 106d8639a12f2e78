import { screen, waitFor, within } from "@testing-library/react";
import userEvent from "@testing-library/user-event";
import type { CatalogView, HubRepo, ModelChecksView } from "../../bindings";
import { fakeBackend, installedModel } from "../../test/fakeBackend";
import { render } from "../../test/render";
import { ModelsScreen } from "./ModelsScreen";

/** What the engine says when nothing answers at the Hub's address. */
const UNREACHABLE =
  "cannot reach the Hub that HF_ENDPOINT names (http://127.0.0.1:9): the connection was " +
  "refused, nothing answers at that address; check that HF_ENDPOINT is right and its server " +
  "is running, then the internet connection and the proxy settings";

const EMPTY_CATALOG: CatalogView = {
  machine: { total_memory: 16e9, available_memory: 8e9, free_disk: 100e9, cores: 4 },
  items: [],
  recommendation: null,
};

const NO_CHECKS: ModelChecksView = { item_count: 200, models: [] };

/** A Hub whose answers to `models_search` come from `answers`, one per search, in order: a
 * list of repositories, or an error (thrown as the engine's `AppError`). */
function hubAnswering(answers: (HubRepo[] | { code: string; message: string })[]) {
  return fakeBackend(
    {},
    {
      models_catalog: () => EMPTY_CATALOG,
      models_checks: () => NO_CHECKS,
      models_search: () => {
        const answer = answers.shift();
        if (answer === undefined) throw new Error("no answer left");
        if (!Array.isArray(answer)) throw answer;
        return answer;
      },
    },
  );
}

const QWEN: HubRepo = { id: "bartowski/Qwen3-GGUF", downloads: 1200, likes: 3, gated: false };

describe("Models screen: what went wrong, and what to do", () => {
  it("says why a search failed with Try again, which asks the same again", async () => {
    const backend = hubAnswering([{ code: "download", message: UNREACHABLE }, [QWEN]]);
    const user = userEvent.setup();
    render(<ModelsScreen />);
    await user.type(await screen.findByLabelText("Search Hugging Face for GGUF models"), "qwen3");
    await user.click(screen.getByRole("button", { name: "Search" }));

    expect(await screen.findByRole("alert")).toHaveTextContent(UNREACHABLE);
    // The query box may change meanwhile: Try again asks what failed.
    await user.clear(screen.getByLabelText("Search Hugging Face for GGUF models"));
    await user.type(screen.getByLabelText("Search Hugging Face for GGUF models"), "other words");
    await user.click(screen.getByRole("button", { name: "Try again" }));
    expect(await screen.findByRole("button", { name: "bartowski/Qwen3-GGUF" })).toBeVisible();
    expect(backend.argsOf("models_search")).toEqual([{ query: "qwen3" }, { query: "qwen3" }]);
    expect(screen.queryByRole("alert")).not.toBeInTheDocument();
    expect(screen.queryByRole("button", { name: "Try again" })).not.toBeInTheDocument();
  });

  it("shows no result of an earlier search beside a failed one", async () => {
    hubAnswering([[], { code: "download", message: UNREACHABLE }]);
    const user = userEvent.setup();
    render(<ModelsScreen />);
    const box = await screen.findByLabelText("Search Hugging Face for GGUF models");
    await user.type(box, "nothing like it");
    await user.click(screen.getByRole("button", { name: "Search" }));
    expect(await screen.findByText("No GGUF repositories match.")).toBeVisible();

    await user.clear(box);
    await user.type(box, "qwen3");
    await user.click(screen.getByRole("button", { name: "Search" }));
    expect(await screen.findByRole("alert")).toHaveTextContent(UNREACHABLE);
    expect(screen.queryByText("No GGUF repositories match.")).not.toBeInTheDocument();
  });

  it("says why a repository's files could not be listed, with Try again", async () => {
    let fail = true;
    const backend = fakeBackend(
      {},
      {
        models_catalog: () => EMPTY_CATALOG,
        models_checks: () => NO_CHECKS,
        models_search: () => [QWEN],
        models_files: () => {
          if (fail) throw { code: "download", message: UNREACHABLE };
          return [
            {
              path: "Qwen3-Q4_K_M.gguf",
              size: 2.5e9,
              sha256: null,
              quantization: "Q4_K_M",
              fit: { fit: "good", reason: "fits" },
            },
          ];
        },
      },
    );
    const user = userEvent.setup();
    render(<ModelsScreen />);
    await user.type(await screen.findByLabelText("Search Hugging Face for GGUF models"), "qwen3");
    await user.click(screen.getByRole("button", { name: "Search" }));
    await user.click(await screen.findByRole("button", { name: "bartowski/Qwen3-GGUF" }));
    expect(await screen.findByRole("alert")).toHaveTextContent(UNREACHABLE);
    // The repositories found stay.
    expect(screen.getByRole("button", { name: "bartowski/Qwen3-GGUF" })).toBeVisible();

    fail = false;
    await user.click(screen.getByRole("button", { name: "Try again" }));
    expect(await screen.findByRole("button", { name: "Download Qwen3-Q4_K_M.gguf" })).toBeVisible();
    expect(backend.argsOf("models_files")).toEqual([
      { repo: "bartowski/Qwen3-GGUF" },
      { repo: "bartowski/Qwen3-GGUF" },
    ]);
    expect(screen.queryByRole("alert")).not.toBeInTheDocument();
  });

  it("names the models folder when no file manager opens it, and copies its path", async () => {
    const sentence =
      "no file manager opened the folder /home/u/.local/share/artifactflow/models: open it " +
      "yourself, or set a default application for folders";
    fakeBackend(
      {},
      {
        models_catalog: () => EMPTY_CATALOG,
        models_checks: () => NO_CHECKS,
        open_models_folder: () => {
          throw { code: "open_failed", message: sentence };
        },
      },
    );
    const user = userEvent.setup();
    render(<ModelsScreen />);
    await user.click(await screen.findByRole("button", { name: "Open the models folder" }));
    const problem = within(await screen.findByTestId("models-folder-error"));
    expect(problem.getByRole("alert")).toHaveTextContent(sentence);
    await user.click(problem.getByRole("button", { name: "Copy the folder's path" }));
    expect(await problem.findByRole("button", { name: "Copied" })).toBeVisible();
    expect(await navigator.clipboard.readText()).toBe("/home/u/.local/share/artifactflow/models");
  });

  it("says what a file pulled for a catalogue entry really is, in its row", async () => {
    const message =
      "This file is a llama model of 1.1 GB, not the Gemma 3 1B Instruct (gemma3, 806.1 MB) " +
      "the catalogue lists";
    fakeBackend(
      {
        installed: [
          installedModel("gemma-3-1b-it-Q4_K_M", {
            size: 1.1e9,
            catalog_mismatch: {
              entry: "gemma-3-1b",
              entry_name: "Gemma 3 1B Instruct",
              expected_architecture: "gemma3",
              expected_size: 806058240,
              architecture: "llama",
              size: 1.1e9,
              message,
            },
          }),
          installedModel("SmolLM2-135M"),
        ],
      },
      { models_catalog: () => EMPTY_CATALOG, models_checks: () => NO_CHECKS },
    );
    render(<ModelsScreen />);
    const row = within(await screen.findByTestId("model-gemma-3-1b-it-Q4_K_M"));
    expect(row.getByRole("note")).toHaveTextContent(message);
    expect(
      within(screen.getByTestId("model-SmolLM2-135M")).queryByTestId(/^mismatch-/),
    ).not.toBeInTheDocument();
    await waitFor(() => expect(row.getByText("llama")).toBeVisible());
  });
});
