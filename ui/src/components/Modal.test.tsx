import { fireEvent, render, screen } from "@testing-library/react";
import { useRef, useState } from "react";
import { describe, expect, it, vi } from "vitest";
import { Modal } from "./Modal";

/** Escape as the browser delivers it to a modal dialog: a cancelable `cancel` event. */
function pressEscape(dialog: HTMLElement): Event {
  const cancel = new Event("cancel", { cancelable: true });
  fireEvent(dialog, cancel);
  return cancel;
}

function Closable(props: { dismissible: boolean; onEscape?: () => void }) {
  const [open, setOpen] = useState(true);
  const first = useRef<HTMLButtonElement>(null);
  return (
    <>
      <button type="button" onClick={() => setOpen(true)}>
        Reopen
      </button>
      <Modal
        open={open}
        aria-labelledby="t"
        data-testid="modal"
        initialFocus={first}
        onEscape={
          props.dismissible
            ? () => {
                props.onEscape?.();
                setOpen(false);
              }
            : undefined
        }
      >
        <h2 id="t">Title</h2>
        <button type="button" ref={first}>
          First
        </button>
        <button type="button" onClick={() => setOpen(false)}>
          Close
        </button>
      </Modal>
    </>
  );
}

describe("Modal", () => {
  it("opens as a modal and focuses its initial element", () => {
    render(<Closable dismissible />);
    expect(screen.getByTestId("modal")).toHaveAttribute("open");
    expect(screen.getByRole("button", { name: "First" })).toHaveFocus();
  });

  it("Escape closes it when the owner allows", () => {
    const onEscape = vi.fn();
    render(<Closable dismissible onEscape={onEscape} />);
    const cancel = pressEscape(screen.getByTestId("modal"));
    expect(onEscape).toHaveBeenCalledTimes(1);
    // The owner closed it, not the browser behind its back.
    expect(cancel.defaultPrevented).toBe(true);
    expect(screen.getByTestId("modal")).not.toHaveAttribute("open");
  });

  it("Escape does nothing when the dialog wants an answer", () => {
    render(<Closable dismissible={false} />);
    const cancel = pressEscape(screen.getByTestId("modal"));
    expect(cancel.defaultPrevented).toBe(true);
    expect(screen.getByTestId("modal")).toHaveAttribute("open");
  });

  it("closes when the owner sets open to false, and focuses again when reopened", () => {
    render(<Closable dismissible={false} />);
    fireEvent.click(screen.getByRole("button", { name: "Close" }));
    expect(screen.getByTestId("modal")).not.toHaveAttribute("open");
    fireEvent.click(screen.getByRole("button", { name: "Reopen", hidden: true }));
    expect(screen.getByTestId("modal")).toHaveAttribute("open");
    expect(screen.getByRole("button", { name: "First" })).toHaveFocus();
  });
});
