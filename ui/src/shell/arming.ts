import { useCallback, useEffect, useState } from "react";

/**
 * How long a dialog's consequential buttons (Approve, Always allow, Accept) stay disarmed once a
 * request is shown, and after every key press or click while disarmed (as browsers do for
 * install prompts): Enter typed into the composer, a double click or a held key meant for
 * something else cannot answer a request nobody has read. Each new request in the queue
 * disarms again.
 */
export const ARM_DELAY_MS = 1000;

/**
 * Whether answering is armed for request `requestId`: false for {@link ARM_DELAY_MS} after
 * the request appears, and again after each `disarm()` (a key press or click while disarmed).
 */
export function useArming(requestId: string | null) {
  const [armedFor, setArmedFor] = useState<string | null>(null);
  const [restarts, setRestarts] = useState(0);
  useEffect(() => {
    if (!requestId) return;
    const timer = setTimeout(() => setArmedFor(requestId), ARM_DELAY_MS);
    return () => clearTimeout(timer);
  }, [requestId, restarts]);
  const disarm = useCallback(() => setRestarts((n) => n + 1), []);
  return { armed: requestId !== null && armedFor === requestId, disarm };
}
