import { act, fireEvent, render as plainRender, screen } from "@testing-library/react";
import userEvent from "@testing-library/user-event";
import { vi } from "vitest";
import { pushEngine } from "../test/pushed";
import type { ElicitationForm, ElicitationReply } from "../bindings";
import { IpcError } from "../ipc/call";
import { ARM_DELAY_MS } from "./arming";
import { fakeBackend } from "../test/fakeBackend";
import { render } from "../test/render";
import { ElicitationDialog } from "./ElicitationDialog";
import { initialValues, validateForm } from "./elicitationForm";
import { useElicitations, type PendingElicitation } from "./useElicitations";

/** The engine's parse of server-everything's form (trimmed to one field of each kind). */
const FORM: ElicitationForm = {
  fields: [
    {
      name: "name",
      title: "Name",
      description: "Your full, legal name",
      required: true,
      kind: { type: "text", min_length: 2, max_length: null, format: null, default: null },
    },
    {
      name: "firstLine",
      title: "First line",
      description: null,
      required: false,
      kind: {
        type: "text",
        min_length: null,
        max_length: null,
        format: null,
        default: "It was a dark and stormy night.",
      },
    },
    {
      name: "email",
      title: "Email",
      description: null,
      required: false,
      kind: { type: "text", min_length: null, max_length: null, format: "email", default: null },
    },
    {
      name: "integer",
      title: "Integer",
      description: null,
      required: false,
      kind: { type: "number", integer: true, minimum: 1, maximum: 100, default: 42 },
    },
    {
      name: "check",
      title: "Agree",
      description: null,
      required: false,
      kind: { type: "boolean", default: true },
    },
    {
      name: "hero",
      title: "Hero",
      description: null,
      required: false,
      kind: {
        type: "choice",
        options: [
          { value: "hero-1", title: "Superman" },
          { value: "hero-2", title: "Wonder Woman" },
        ],
        default: "hero-2",
      },
    },
    {
      name: "fish",
      title: "Fish",
      description: null,
      required: false,
      kind: {
        type: "multi_choice",
        options: [
          { value: "fish-1", title: "Tuna" },
          { value: "fish-2", title: "Salmon" },
        ],
        min_items: 1,
        max_items: null,
        default: ["fish-2"],
      },
    },
  ],
};

const DEFAULTS = {
  firstLine: "It was a dark and stormy night.",
  integer: 42,
  check: true,
  hero: "hero-2",
  fish: ["fish-2"],
};

const request = (id: string, over: Partial<PendingElicitation> = {}): PendingElicitation => ({
  requestId: id,
  server: "everything",
  message: "Please provide inputs for the following fields:",
  form: FORM,
  url: null,
  origin: {
    conversation_id: "c1",
    conversation_title: "Trip planning",
    call_id: "call_1",
    agent: "search_agent",
    agent_chain: ["lead_agent", "search_agent"],
    view_of: null,
    depth: 1,
  },
  deadlineMs: Date.now() + 600_000,
  ...over,
});

/** The dialog over `queue`, recording every answer; `refuse` makes the next answer fail. */
function dialogOver(queue: PendingElicitation[]) {
  const answers: [string, ElicitationReply][] = [];
  const opened: string[] = [];
  let refuse: IpcError | null = null;
  const onAnswer = (id: string, reply: ElicitationReply) => {
    answers.push([id, reply]);
    const error = refuse;
    refuse = null;
    return error ? Promise.reject(error) : Promise.resolve();
  };
  const onOpenUrl = (url: string) => {
    opened.push(url);
    return Promise.resolve();
  };
  const view = plainRender(
    <ElicitationDialog queue={queue} onAnswer={onAnswer} onOpenUrl={onOpenUrl} />,
  );
  return {
    answers,
    opened,
    refuseNext: (e: IpcError) => (refuse = e),
    rerender: (next: PendingElicitation[]) =>
      view.rerender(<ElicitationDialog queue={next} onAnswer={onAnswer} onOpenUrl={onOpenUrl} />),
  };
}

const dialog = () => screen.getByTestId("elicitation-dialog");
const input = (name: string) =>
  dialog().querySelector(`[data-field="${name}"]`) as HTMLInputElement;

/** Time is fake: nothing here waits. `user` types and clicks, moving the fake clock. */
let user: ReturnType<typeof userEvent.setup>;
beforeEach(() => {
  vi.useFakeTimers();
  // Testing Library ends each user action with a zero timeout, which it runs itself only on
  // Jest's fake clock: lend it Vitest's.
  vi.stubGlobal("jest", { advanceTimersByTime: (ms: number) => vi.advanceTimersByTime(ms) });
  user = userEvent.setup({ advanceTimers: (ms) => vi.advanceTimersByTime(ms) });
});
afterEach(() => {
  vi.unstubAllGlobals();
  vi.useRealTimers();
});
const wait = (ms: number) => act(() => vi.advanceTimersByTime(ms));
/** Let the dialog arm: a while on screen with no key or click. */
const arm = () => wait(ARM_DELAY_MS);

describe("ElicitationDialog", () => {
  it("shows who asks, the message and every field with the schema's defaults filled in, focused on the title", () => {
    dialogOver([request("e1")]);
    expect(dialog()).toHaveAttribute("open");
    expect(dialog()).toHaveTextContent("everything asks for information");
    expect(screen.getByTestId("elicitation-origin")).toHaveTextContent(
      "During a call by lead_agent → search_agent in Trip planning.",
    );
    expect(screen.getByTestId("elicitation-message")).toHaveTextContent(
      "Please provide inputs for the following fields:",
    );
    expect(input("name")).toHaveValue("");
    expect(screen.getByRole("heading", { name: "everything asks for information" })).toHaveFocus();
    expect(screen.getByLabelText(/First line/)).toHaveValue("It was a dark and stormy night.");
    expect(input("integer")).toHaveValue(42);
    expect(input("check")).toBeChecked();
    expect(input("hero")).toHaveValue("hero-2");
    expect(screen.getByRole("checkbox", { name: "Salmon" })).toBeChecked();
    expect(screen.getByRole("checkbox", { name: "Tuna" })).not.toBeChecked();
    expect(dialog()).toHaveTextContent("Your full, legal name · at least 2 characters");
    expect(dialog()).toHaveTextContent("from 1 to 100");
  });

  it("checks values as they are typed and sends nothing until they fit; then the defaults go with the typed values", async () => {
    const { answers } = dialogOver([request("e1")]);
    await user.click(input("name"));
    await user.type(input("email"), "ada at example");
    await user.tab();
    // Fields left show their problem: the required name, the email typed.
    expect(screen.getAllByRole("alert").map((a) => a.textContent)).toEqual([
      "required",
      "must be an email address (name@example.com)",
    ]);
    expect(input("email")).toHaveAttribute("aria-invalid", "true");

    await arm();
    await user.click(screen.getByTestId("elicitation-accept"));
    expect(answers).toEqual([]);
    expect(dialog()).toHaveTextContent("required");

    await user.clear(input("integer"));
    await user.type(input("integer"), "4.5");
    await arm();
    await user.click(screen.getByTestId("elicitation-accept"));
    expect(dialog()).toHaveTextContent("must be a whole number");
    expect(answers).toEqual([]);

    await user.clear(input("integer"));
    await user.type(input("integer"), "7");
    await user.clear(input("email"));
    await user.type(input("email"), "ada@example.com");
    await user.type(input("name"), "Ada");
    await arm();
    await user.keyboard("{Enter}");
    expect(answers).toEqual([
      [
        "e1",
        {
          action: "accept",
          content: { ...DEFAULTS, name: "Ada", email: "ada@example.com", integer: 7 },
        },
      ],
    ]);
  });

  it("opens on its title and answers nothing until armed: Enter in a field and Accept wait a second on screen", async () => {
    const { answers } = dialogOver([request("e1")]);
    // The focus starts on the title, not in a field where Enter would submit.
    expect(screen.getByRole("heading", { name: "everything asks for information" })).toHaveFocus();
    expect(dialog()).toHaveAttribute("data-armed", "false");
    expect(screen.getByTestId("elicitation-accept")).toBeDisabled();
    await user.type(input("name"), "Ada{Enter}");
    fireEvent.submit(input("name"));
    expect(answers).toEqual([]);

    await arm();
    expect(dialog()).toHaveAttribute("data-armed", "true");
    expect(screen.getByTestId("elicitation-accept")).toBeEnabled();
    await user.keyboard("{Enter}");
    expect(answers).toEqual([["e1", { action: "accept", content: { ...DEFAULTS, name: "Ada" } }]]);
  });

  it("says why Accept is greyed while it arms, and stops saying it once armed", async () => {
    dialogOver([request("e1")]);
    expect(screen.getByTestId("elicitation-arming")).toHaveTextContent(
      "Accept is available in 1 s",
    );
    await arm();
    expect(screen.getByTestId("elicitation-accept")).toBeEnabled();
    expect(screen.getByTestId("elicitation-arming")).toBeEmptyDOMElement();
  });

  it("keeps disarmed while keys or clicks keep coming, and never submits on a held Enter", async () => {
    const { answers } = dialogOver([
      request("e1", { form: { fields: FORM.fields.filter((f) => f.name === "firstLine") } }),
    ]);
    for (let i = 0; i < 6; i++) {
      await wait(ARM_DELAY_MS - 100);
      if (i % 2) fireEvent.keyDown(document.activeElement ?? document.body, { key: "x" });
      else fireEvent.pointerDown(dialog());
    }
    expect(dialog()).toHaveAttribute("data-armed", "false");
    fireEvent.submit(input("firstLine"));
    expect(answers).toEqual([]);

    // A key held down since before the dialog showed only repeats: its Enter is cancelled,
    // which stops the browser's submit.
    await arm();
    input("firstLine").focus();
    expect(fireEvent.keyDown(input("firstLine"), { key: "Enter", repeat: true })).toBe(false);
    expect(answers).toEqual([]);
  });

  it("arms each queued request again", async () => {
    const d = dialogOver([request("e1"), request("e2")]);
    await arm();
    expect(dialog()).toHaveAttribute("data-armed", "true");
    d.rerender([request("e2")]);
    expect(dialog()).toHaveAttribute("data-armed", "false");
    expect(screen.getByTestId("elicitation-accept")).toBeDisabled();
    await arm();
    expect(dialog()).toHaveAttribute("data-armed", "true");
  });

  it("counts down to the request's own deadline, live", () => {
    vi.setSystemTime(new Date("2026-01-01T10:00:00Z"));
    // The engine's deadline, whatever its timeout: here 90 s away, not the default 10 min.
    dialogOver([request("e1", { deadlineMs: Date.now() + 90_000 })]);
    const countdown = () => screen.getByTestId("elicitation-countdown");
    expect(countdown()).toHaveTextContent("Cancelled automatically in 1:30.");
    wait(31_000);
    expect(countdown()).toHaveTextContent("Cancelled automatically in 0:59.");
    wait(120_000);
    expect(countdown()).toHaveTextContent("Cancelled automatically in 0:00.");
  });

  it("Escape cancels, Decline declines, at once (armed or not)", async () => {
    const { answers } = dialogOver([request("e1")]);
    fireEvent(dialog(), new Event("cancel", { cancelable: true }));
    await user.click(screen.getByTestId("elicitation-decline"));
    expect(answers).toEqual([
      ["e1", { action: "cancel" }],
      ["e1", { action: "decline" }],
    ]);
  });

  it("shows the engine's refusal and keeps the form", async () => {
    const d = dialogOver([request("e1")]);
    d.refuseNext(
      new IpcError(
        "invalid_answer",
        "the answer does not fit the form, nothing was sent: `name` must be at least 2 characters",
      ),
    );
    await user.type(input("name"), "Ada");
    await arm();
    await user.click(screen.getByTestId("elicitation-accept"));
    expect(await screen.findByTestId("elicitation-failure")).toHaveTextContent(
      "nothing was sent: `name` must be at least 2 characters",
    );
    expect(input("name")).toHaveValue("Ada");
    expect(screen.getByTestId("elicitation-accept")).toBeEnabled();
  });

  it("a URL request shows the page, opens it only on a click, and continues without values", async () => {
    const d = dialogOver([
      request("u1", { form: null, url: "https://example.com/consent", origin: null }),
    ]);
    expect(dialog()).toHaveTextContent("everything asks for you to open a page");
    expect(screen.getByTestId("elicitation-url")).toHaveTextContent("https://example.com/consent");
    expect(screen.getByTestId("elicitation-origin")).toHaveTextContent(
      "which conversation is not known",
    );
    expect(d.opened).toEqual([]);
    // Nothing opens before the dialog is armed.
    expect(screen.getByTestId("elicitation-open")).toBeDisabled();
    await arm();
    await user.click(screen.getByTestId("elicitation-open"));
    expect(d.opened).toEqual(["https://example.com/consent"]);
    expect(d.answers).toEqual([]);
    await user.click(screen.getByTestId("elicitation-accept"));
    expect(d.answers).toEqual([["u1", { action: "accept", content: {} }]]);
  });

  it("answers several requests in the order they came, each with its own values", async () => {
    const d = dialogOver([request("e1"), request("e2")]);
    expect(dialog()).toHaveTextContent("1 more waiting");
    await user.type(input("name"), "First");
    d.rerender([request("e2")]);
    expect(input("name")).toHaveValue("");
    expect(screen.getByRole("heading", { name: "everything asks for information" })).toHaveFocus();
    d.rerender([]);
    expect(screen.getByTestId("elicitation-dialog")).not.toHaveAttribute("open");
  });
});

describe("elicitation form values", () => {
  it("start from the defaults, and an empty optional field is left out", () => {
    const values = initialValues(FORM);
    expect(values).toEqual({ name: "", email: "", ...DEFAULTS, integer: "42" });
    const { content, errors } = validateForm(FORM, { ...values, name: "Ada" });
    expect(errors).toEqual({});
    expect(content).toEqual({ ...DEFAULTS, name: "Ada" });
  });

  it("name each problem", () => {
    const { errors } = validateForm(FORM, {
      ...initialValues(FORM),
      name: "A",
      integer: "500",
      fish: [],
    });
    expect(errors).toEqual({
      name: "must be at least 2 characters",
      integer: "must be at most 100",
      fish: "choose at least 1",
    });
  });
});

/** The app's wiring: the hook over engine events and the shell command. */
function Harness() {
  const { queue, answer } = useElicitations();
  return <ElicitationDialog queue={queue} onAnswer={answer} onOpenUrl={() => Promise.resolve()} />;
}

describe("useElicitations", () => {
  it("queues the engine's request, answers through answer_elicitation and closes on resolve", async () => {
    const backend = fakeBackend({}, { answer_elicitation: () => null });
    render(<Harness />);
    await act(() =>
      pushEngine({
        type: "elicitation_request",
        request_id: "e9",
        server: "everything",
        message: "Who?",
        form: FORM,
        url: null,
        origin: null,
        deadline_ms: Date.now() + 600_000,
      }),
    );
    expect(dialog()).toHaveAttribute("open");
    await user.type(input("name"), "Ada");
    await arm();
    await user.click(screen.getByTestId("elicitation-accept"));
    // Closed once the engine took the answer.
    await vi.waitFor(() => expect(dialog()).not.toHaveAttribute("open"));
    expect(backend.argsOf("answer_elicitation")).toEqual([
      { requestId: "e9", answer: { action: "accept", content: { ...DEFAULTS, name: "Ada" } } },
    ]);

    // A request the engine ends (timeout, the run's stop) leaves the queue.
    await act(() =>
      pushEngine({
        type: "elicitation_request",
        request_id: "e10",
        server: "everything",
        message: "Again?",
        form: FORM,
        url: null,
        origin: null,
        deadline_ms: Date.now() + 600_000,
      }),
    );
    expect(dialog()).toHaveAttribute("open");
    await act(() =>
      pushEngine({
        type: "elicitation_resolved",
        conversation_id: null,
        request_id: "e10",
        outcome: "cancelled",
        resolution: "cancelled",
      }),
    );
    expect(dialog()).not.toHaveAttribute("open");
  });
});
