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
 * answer) and "3.1k / 8k tokens". It warns in colour and in words near the limit, and says so
 * when the request and the answer's room together went over the window (the engine keeps every
 * request within the window minus the answer's room and cuts the latest tool results to fit,
 * so only instructions and messages that alone do not fit get there). Nothing is shown before
 * the first request of the conversation (the engine has not measured it yet).
 */
export function ContextMeter({ usage }: { usage: ContextUsage | null }) {
  if (usage === null || usage.window <= 0) return null;
  const { estimated, reserved, window } = usage;
  const used = estimated + reserved;
  const share = used / window;
  const over = used > window;
  const full = over || share >= NEARLY_FULL;
  // Over the window never reads as 100 % or less.
  const percent = over ? Math.max(101, Math.round(share * 100)) : Math.round(share * 100);
  const fmt = (n: number) => n.toLocaleString("en-US");
  const answer = over
    ? `only ${fmt(Math.max(0, window - estimated))} of the ${fmt(reserved)} kept for the answer left`
    : `${fmt(reserved)} kept for the answer`;
  const parts =
    `${fmt(estimated)} tokens of history and instructions, ` +
    `${answer}, of the model's ${fmt(window)}-token context window`;
  const warning = over
    ? ". Over the window: the answer may be cut short. Shorten your message or start a new " +
      "conversation, or choose a model profile with a larger context window"
    : full
      ? ". Nearly full: older messages will be condensed for the model"
      : "";
  const width = (n: number) => `${Math.min(100, (n / window) * 100)}%`;
  const className = over
    ? "context-meter nearly-full over-window"
    : full
      ? "context-meter nearly-full"
      : "context-meter";
  return (
    <div
      className={className}
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
        {full && (
          <strong className="context-meter-warning">
            {over ? " · over the window" : " · nearly full"}
          </strong>
        )}
      </span>
    </div>
  );
}
