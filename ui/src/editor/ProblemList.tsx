import type { ConfigError } from "../bindings";

/** The backend's located problems with a draft; a line number jumps to it in the raw text. */
export function ProblemList(props: {
  errors: readonly ConfigError[];
  checking: boolean;
  onGoTo: (line: number | null) => void;
}) {
  return (
    <section aria-labelledby="problems-title" className="problem-list">
      <h3 id="problems-title">Problems</h3>
      {props.checking ? (
        <p className="muted small">Checking…</p>
      ) : props.errors.length === 0 ? (
        <p className="tag tag-ok" data-testid="no-problems">
          Valid: it loads as written.
        </p>
      ) : (
        <ul className="error-list" data-testid="problems" role="alert">
          {props.errors.map((e, i) => (
            <li key={i}>
              {e.line !== null ? (
                <button type="button" className="link-button" onClick={() => props.onGoTo(e.line)}>
                  line {e.line}
                </button>
              ) : null}
              {e.field !== null && (
                <>
                  {" "}
                  <code>{e.field}</code>
                </>
              )}
              {e.line !== null || e.field !== null ? ": " : ""}
              {e.message}
            </li>
          ))}
        </ul>
      )}
    </section>
  );
}
