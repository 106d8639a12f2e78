import { useState } from "react";
import type { CheckResult, ItemKind, ModelCheckProgress, Verdict } from "../../bindings";
import type { CheckHow, ModelCheckState } from "./useModelChecks";

const KIND_LABEL: Record<ItemKind, string> = {
  one_call: "One call",
  choose_tool: "Choosing a tool",
  two_calls: "Two calls",
  from_context: "A value from earlier",
  no_tool: "No tool needed",
  missing_value: "A value missing (should ask)",
};

const VERDICT_LABEL: Record<Verdict, string> = {
  as_asked: "as asked",
  wrong_arguments: "wrong arguments",
  wrong_tool: "wrong tool",
  invalid_call: "invalid call",
  no_call: "no call",
  unwanted_call: "unwanted call",
  failed: "failed",
};

const HOW_LABEL: Record<CheckHow, string> = {
  auto: "The best mode known (auto)",
  text_guided: "Text, guided",
  text: "Text, unguided",
  native_guided: "Native, guided",
  native: "Native, unguided",
};

function percent(n: number, of: number): string {
  return of === 0 ? "—" : `${Math.round((n * 100) / of)} %`;
}

/** `native, guided` */
export function modeText(c: { mode: string; guided: boolean }): string {
  return `${c.mode}, ${c.guided ? "guided" : "unguided"}`;
}

/** The badge's text: `Tools 71 % · native, guided`. */
export function badgeText(c: CheckResult): string {
  return `Tools ${percent(c.totals.as_asked, c.totals.items)} · ${modeText(c)}`;
}

/** The score by kind of item, one line each (the badge's tooltip and the breakdown). */
export function kindLines(c: CheckResult): string[] {
  return c.by_kind.map(
    (k) => `${KIND_LABEL[k.kind]}: ${k.as_asked} of ${k.items} (${percent(k.as_asked, k.items)})`,
  );
}

/**
 * How long a check of `itemCount` items takes here, from the newest check's pace; before any
 * check, that the pace is measured on the first item.
 */
export function estimateText(checks: CheckResult[], itemCount: number | null): string {
  const last = checks.find((c) => c.totals.items > 0);
  if (!last || itemCount == null) {
    return "The time it takes on this computer is measured on the first item.";
  }
  const minutes = Math.round(((last.seconds / last.totals.items) * itemCount) / 60);
  return minutes < 1
    ? "Under a minute on this computer."
    : `About ${minutes} minute${minutes === 1 ? "" : "s"} on this computer.`;
}

function left(secs: number | null): string {
  if (secs == null) return "";
  const s = Math.max(0, Math.round(secs));
  if (s < 90) return ` · about ${s} s left`;
  return ` · about ${Math.round(s / 60)} min left`;
}

/** One line of a running or ended check. */
export function checkProgressText(p: ModelCheckProgress): string {
  switch (p.phase) {
    case "starting":
      return `Loading the model and asking the first of ${p.total} items (${modeText(p)})…`;
    case "asking":
      return `Item ${p.done} of ${p.total}${p.verdict ? `: ${VERDICT_LABEL[p.verdict]}` : ""}${left(p.eta_secs)}`;
    case "done":
      return `Checked ${p.total} items.`;
    case "cancelled":
      return `Stopped after ${p.done} of ${p.total} items; nothing was kept.`;
    case "failed":
      return "The check failed.";
  }
}

/**
 * The tool-use check of an installed model's row: the stored score as a badge (the breakdown
 * by kind in its tooltip and under "By kind"), the action with how long it takes here, and
 * while it runs, its progress with Cancel.
 */
export function ToolCheck(props: {
  model: string;
  check: ModelCheckState;
  itemCount: number | null;
  /** Another model's check is running (one at a time). */
  busy: boolean;
  /** The model was just downloaded: say so beside the action. */
  justInstalled: boolean;
  onStart: (how: CheckHow) => void;
  onCancel: () => void;
}) {
  const { model, check } = props;
  const [how, setHow] = useState<CheckHow>("auto");
  const checks = check.stored?.checks ?? [];
  const best = check.stored?.best ?? null;
  const p = check.progress;
  const running = p !== null && (p.phase === "starting" || p.phase === "asking");
  const error = check.error ?? (p?.phase === "failed" ? p.error : null);
  const howId = `check-how-${model}`;

  return (
    <div className="tool-check" data-testid={`tool-check-${model}`}>
      {best ? (
        <span className="badge badge-tools" title={kindLines(best).join("\n")}>
          {badgeText(best)}
        </span>
      ) : (
        <span className="muted small">Tool use not checked yet</span>
      )}
      {checks.length > 0 && (
        <details className="tool-check-detail">
          <summary>By kind</summary>
          {checks.map((c) => (
            <div key={c.id} className="small">
              <div>
                {badgeText(c)}
                {c.id === best?.id && checks.length > 1 ? " (best)" : ""}
                <span className="muted">
                  {" "}
                  · {c.totals.items} items · {c.item_set}
                </span>
              </div>
              <ul>
                {kindLines(c).map((line) => (
                  <li key={line}>{line}</li>
                ))}
              </ul>
            </div>
          ))}
        </details>
      )}
      {running ? (
        <div className="tool-check-running">
          <progress
            max={p.total || 1}
            value={p.done}
            aria-label={`Tool-use check of ${model}`}
            aria-valuetext={checkProgressText(p)}
          />
          <p className="small" role="status">
            {checkProgressText(p)}
          </p>
          <button
            type="button"
            onClick={props.onCancel}
            aria-label={`Cancel the check of ${model}`}
          >
            Cancel
          </button>
        </div>
      ) : (
        <div className="tool-check-start">
          {props.justInstalled && (
            <p className="small tool-check-new">
              Downloaded: check how well it calls tools before you use it in a profile.
            </p>
          )}
          <label className="visually-hidden" htmlFor={howId}>
            How to ask {model}
          </label>
          <select id={howId} value={how} onChange={(e) => setHow(e.target.value as CheckHow)}>
            {(Object.keys(HOW_LABEL) as CheckHow[]).map((h) => (
              <option key={h} value={h}>
                {HOW_LABEL[h]}
              </option>
            ))}
          </select>{" "}
          <button
            type="button"
            disabled={props.busy}
            onClick={() => props.onStart(how)}
            aria-label={`Check tool use of ${model}`}
            aria-describedby={`check-estimate-${model}`}
          >
            Check tool use
          </button>
          <p className="muted small" id={`check-estimate-${model}`}>
            {props.itemCount != null ? `${props.itemCount} items. ` : ""}
            {estimateText(checks, props.itemCount)}
            {props.busy ? " Another model's check is running." : ""}
          </p>
          {p && (p.phase === "cancelled" || p.phase === "done") && (
            <p className="small" role="status">
              {checkProgressText(p)}
            </p>
          )}
        </div>
      )}
      {error && (
        <p className="form-errors small" role="alert">
          {error}
        </p>
      )}
    </div>
  );
}
