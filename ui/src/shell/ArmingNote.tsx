import { ARM_DELAY_MS } from "./arming";

/**
 * Why a dialog's consequential buttons are greyed while it arms ({@link useArming}): "Approve
 * is available in 1 s…". The line keeps its place once armed (empty), so the buttons never
 * move under a pointer about to click them.
 */
export function ArmingNote(props: { armed: boolean; action: string; testid: string }) {
  const seconds = Math.ceil(ARM_DELAY_MS / 1000);
  return (
    <p className="arming-note muted small" aria-live="polite" data-testid={props.testid}>
      {props.armed
        ? ""
        : `${props.action} is available in ${seconds} s (once this has been on screen ${seconds} s with no key press or click)`}
    </p>
  );
}
