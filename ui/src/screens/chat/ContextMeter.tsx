import type { ContextUsage } from "./timeline";

/** From this share of the window on, the meter warns: the next rounds may not fit, so older
 * messages are about to be condensed for the model. */
export const NEARLY_FULL = 0.8;

/** A token count in a few characters: 950, 3.1k, 128k. */
export function shortTokens(n: number): string {
  if (n < 1000) return String(n);
  const k = n / 1000;
  return `${k < 100 ? Number(k.toFixed(1)) : Math.round(k)}k`;
}

/**
 * The context meter: how much of the model's context window the conversation's latest request
 * took, as a bar in two parts (the history with the instructions, and the room kept for the
 * answer) and "3.1k / 8k tokens". It warns in colour and in words near the limit. Nothing is
 * shown before the first request of the conversation (the engine has not measured it yet).
 */
export function ContextMeter({ usage }: { usage: ContextUsage | null }) {
  if (usage === null || usage.window <= 0) return null;
  const { estimated, reserved, window } = usage;
  const used = estimated + reserved;
  const share = used / window;
  const full = share >= NEARLY_FULL;
  const percent = Math.round(share * 100);
  const fmt = (n: number) => n.toLocaleString("en-US");
  const parts =
    `${fmt(estimated)} tokens of history and instructions, ` +
    `${fmt(reserved)} kept for the answer, of the model's ${fmt(window)}-token context window`;
  const warning = full ? ". Nearly full: older messages will be condensed for the model" : "";
  const width = (n: number) => `${Math.min(100, (n / window) * 100)}%`;
  return (
    <div
      className={full ? "context-meter nearly-full" : "context-meter"}
      role="meter"
      aria-label="Context window used"
      aria-valuemin={0}
      aria-valuemax={window}
      aria-valuenow={Math.min(used, window)}
      aria-valuetext={`${percent}%: ${parts}${warning}`}
      title={`${percent}% of the context window: ${parts}${warning}.`}
      data-testid="context-meter"
    >
      <span className="context-meter-bar" aria-hidden="true">
        <span className="context-meter-history" style={{ width: width(estimated) }} />
        <span className="context-meter-reserved" style={{ width: width(reserved) }} />
      </span>
      <span className="context-meter-text small" aria-hidden="true">
        {shortTokens(used)} / {shortTokens(window)} tokens
        {full && <strong className="context-meter-warning"> · nearly full</strong>}
      </span>
    </div>
  );
}
