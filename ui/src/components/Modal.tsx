import {
  useEffect,
  useRef,
  type DialogHTMLAttributes,
  type ReactNode,
  type RefObject,
} from "react";

export interface ModalProps extends Omit<
  DialogHTMLAttributes<HTMLDialogElement>,
  "open" | "onCancel"
> {
  /** Shown as a modal while true, closed when false. */
  open: boolean;
  /**
   * Escape (the dialog's `cancel`) calls this; the owner closes the modal by setting `open` to
   * false. Without it, Escape does nothing: the dialog wants an explicit answer.
   */
  onEscape?: (() => void) | undefined;
  /** Focused each time the modal opens; otherwise the browser focuses the first `autoFocus`
   * element (or the dialog), as a modal `<dialog>` does. */
  initialFocus?: RefObject<HTMLElement | null> | undefined;
  children?: ReactNode;
}

/**
 * The app's one modal frame: a native `<dialog>` opened with `showModal()`, so the browser
 * traps the focus inside it, makes the rest of the window inert and returns the focus when it
 * closes. Escape never closes it behind the owner's back: it becomes `onEscape`, and the owner
 * decides (close, deny, stay).
 */
export function Modal({ open, onEscape, initialFocus, children, ...rest }: ModalProps) {
  const dialog = useRef<HTMLDialogElement>(null);
  useEffect(() => {
    const d = dialog.current;
    if (!d) return;
    if (open && !d.open) {
      if (typeof d.showModal === "function") d.showModal();
      else d.setAttribute("open", "");
      initialFocus?.current?.focus();
    } else if (!open && d.open) d.close();
  }, [open, initialFocus]);
  return (
    <dialog
      ref={dialog}
      {...rest}
      onCancel={(e) => {
        e.preventDefault();
        onEscape?.();
      }}
    >
      {children}
    </dialog>
  );
}
