import { useEffect, useRef, useState, type ReactNode } from "react";

/**
 * A button that asks before acting: the first press shows the question with Confirm and Cancel
 * (Cancel focused, Escape cancels); only Confirm runs `onConfirm`.
 */
export function ConfirmButton(props: {
  /** The button's text, e.g. "Delete". */
  children: ReactNode;
  /** Accessible name of the first button, e.g. "Delete OPENAI_API_KEY". */
  label?: string;
  question: ReactNode;
  confirmLabel: string;
  onConfirm: () => void | Promise<void>;
  disabled?: boolean;
  className?: string;
}) {
  const [asking, setAsking] = useState(false);
  const cancelRef = useRef<HTMLButtonElement>(null);
  const openRef = useRef<HTMLButtonElement>(null);
  const wasAsking = useRef(false);

  useEffect(() => {
    if (asking) cancelRef.current?.focus();
    else if (wasAsking.current) openRef.current?.focus();
    wasAsking.current = asking;
  }, [asking]);

  if (!asking) {
    return (
      <button
        type="button"
        ref={openRef}
        className={props.className}
        aria-label={props.label}
        disabled={props.disabled}
        onClick={() => setAsking(true)}
      >
        {props.children}
      </button>
    );
  }
  return (
    <span
      className="confirm"
      role="group"
      aria-label={props.label ? `Confirm: ${props.label}` : "Confirm"}
      onKeyDown={(e) => {
        if (e.key === "Escape") {
          e.stopPropagation();
          setAsking(false);
        }
      }}
    >
      <span className="confirm-question">{props.question}</span>
      <button
        type="button"
        className="danger"
        disabled={props.disabled}
        onClick={() => {
          setAsking(false);
          void props.onConfirm();
        }}
      >
        {props.confirmLabel}
      </button>
      <button type="button" ref={cancelRef} onClick={() => setAsking(false)}>
        Cancel
      </button>
    </span>
  );
}
