import { act, render, screen } from "@testing-library/react";
import { emit } from "@tauri-apps/api/event";
import { mockIPC } from "@tauri-apps/api/mocks";
import { useState } from "react";
import { describe, expect, it } from "vitest";
import { EngineEventsProvider } from "./EngineEventsProvider";
import { useEngineEvents, useStatusChanged } from "./useEngineEvents";

/** A screen that counts the events it got. */
function Counter(props: { name: string }) {
  const [engine, setEngine] = useState(0);
  const [status, setStatus] = useState(0);
  useEngineEvents(() => setEngine((n) => n + 1));
  useStatusChanged(() => setStatus((n) => n + 1));
  return <p data-testid={props.name}>{`${engine} ${status}`}</p>;
}

describe("EngineEventsProvider", () => {
  it("hands each backend event to every screen", async () => {
    mockIPC(() => null, { shouldMockEvents: true });
    render(
      <EngineEventsProvider>
        <Counter name="a" />
        <Counter name="b" />
        <Counter name="c" />
      </EngineEventsProvider>,
    );
    await act(() => emit("engine-event", { type: "run_started" }));
    await act(() => emit("status-changed", { status: {} }));
    await act(() => emit("engine-event", { type: "run_ended" }));
    for (const name of ["a", "b", "c"]) expect(screen.getByTestId(name)).toHaveTextContent("2 1");
  });

  it("listens once per backend event however many screens subscribe", async () => {
    const listens: string[] = [];
    mockIPC((cmd, args) => {
      if (cmd === "plugin:event|listen") listens.push((args as { event: string }).event);
      return listens.length;
    });
    render(
      <EngineEventsProvider>
        <Counter name="a" />
        <Counter name="b" />
        <Counter name="c" />
      </EngineEventsProvider>,
    );
    await act(async () => {});
    expect(listens.sort()).toEqual(["engine-event", "status-changed"]);
  });

  it("tells a screen used outside the provider what is missing", () => {
    expect(() => render(<Counter name="alone" />)).toThrow(/EngineEventsProvider/);
  });
});
