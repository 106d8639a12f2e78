import { act, render, screen } from "@testing-library/react";
import { mockIPC } from "@tauri-apps/api/mocks";
import { useState } from "react";
import { describe, expect, it, vi } from "vitest";
import { push, pushEngine, pushStatus } from "../test/pushed";
import { EngineEventsProvider } from "./EngineEventsProvider";
import { useEngineEvents, useStatusChanged } from "./useEngineEvents";

/** A screen that counts the events it got, and lists the engine events' types. */
function Counter(props: { name: string; fail?: boolean }) {
  const [engine, setEngine] = useState<string[]>([]);
  const [status, setStatus] = useState(0);
  useEngineEvents((e) => {
    if (props.fail) throw new Error("this screen's handler fails");
    setEngine((seen) => [...seen, e.type]);
  });
  useStatusChanged(() => setStatus((n) => n + 1));
  return <p data-testid={props.name}>{`${engine.join(",")} ${status}`}</p>;
}

describe("EngineEventsProvider", () => {
  it("hands each pushed event to every screen, once", async () => {
    mockIPC(() => null);
    render(
      <EngineEventsProvider>
        <Counter name="a" />
        <Counter name="b" />
        <Counter name="c" />
      </EngineEventsProvider>,
    );
    await act(() => pushEngine({ type: "run_started" }));
    await act(() => pushStatus({ status: {} }));
    await act(() => pushEngine({ type: "run_ended" }));
    for (const name of ["a", "b", "c"])
      expect(screen.getByTestId(name)).toHaveTextContent("run_started,run_ended 1");
  });

  it("hands a batch out in order, and a failing screen costs the others nothing", async () => {
    mockIPC(() => null);
    const errors = vi.spyOn(console, "error").mockImplementation(() => undefined);
    render(
      <EngineEventsProvider>
        <Counter name="broken" fail />
        <Counter name="a" />
      </EngineEventsProvider>,
    );
    await act(() =>
      push(
        { kind: "engine", event: { type: "run_started" } as never },
        { kind: "engine", event: { type: "token" } as never },
        { kind: "close_requested" },
        { kind: "engine", event: { type: "run_ended" } as never },
      ),
    );
    expect(screen.getByTestId("a")).toHaveTextContent("run_started,token,run_ended 0");
    expect(errors).toHaveBeenCalled();
    errors.mockRestore();
  });

  it("tells a screen used outside the provider what is missing", () => {
    expect(() => render(<Counter name="alone" />)).toThrow(/EngineEventsProvider/);
  });
});
