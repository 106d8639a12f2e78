/** Bounds of the permission timeout, as the backend enforces them. */
export const TIMEOUT_MIN = 5;
export const TIMEOUT_MAX = 3600;

/** The whole number of seconds in `text`, or why it is not acceptable. */
export function parseTimeout(
  text: string,
): { ok: true; seconds: number } | { ok: false; error: string } {
  const t = text.trim();
  const n = Number(t);
  if (t === "" || !Number.isInteger(n)) {
    return { ok: false, error: "Enter a whole number of seconds." };
  }
  if (n < TIMEOUT_MIN || n > TIMEOUT_MAX) {
    return { ok: false, error: `Choose between ${TIMEOUT_MIN} and ${TIMEOUT_MAX} seconds.` };
  }
  return { ok: true, seconds: n };
}
