import { useEffect, useId, useRef, useState } from "react";
import { commands, type ParamSpec, type ToolTest } from "../../bindings";
import { attempt, errorMessage } from "../../ipc/call";
import { Spinner } from "../../components/Spinner";
import type { ToolDraft } from "./toolDraft";

/** One parameter as the test form asks for it: the default as text, the allowed values. */
export type TestParam = {
  name: string;
  type: string;
  required: boolean;
  /** Text; empty means no default. */
  default: string;
  /** The only values allowed; empty means any. */
  options: string[];
};

/** The test form's parameters of an HTTP tool draft. */
export const draftTestParams = (draft: ToolDraft | null): TestParam[] =>
  (draft?.parameters ?? []).map((p) => ({
    name: p.name,
    type: p.type,
    required: p.required,
    default: p.default,
    options: p.enum === "" ? [] : p.enum.split(",").map((v) => v.trim()),
  }));

/** The test form's parameters of a registered tool (e.g. an MCP server's). */
export const specTestParams = (params: ParamSpec[]): TestParam[] =>
  params.map((p) => ({
    name: p.name,
    type: p.type,
    required: p.required ?? true,
    default:
      p.default === null || p.default === undefined
        ? ""
        : typeof p.default === "string"
          ? p.default
          : JSON.stringify(p.default),
    options: p.enum ?? [],
  }));

/**
 * Run a tool through the real pipeline (`run` calls the backend): the parameters are sent as
 * the model would write them, defaults are filled in and values typed as declared; a `confirm`
 * tool asks in the permission dialog. Shows the value the model gets, the parameters sent and,
 * for HTTP tools, the request (secrets by name) and the response.
 */
export function TestPanel(props: {
  params: TestParam[];
  run: (params: Record<string, string>) => Promise<ToolTest>;
  disabled: boolean;
  /** Why the test is disabled. */
  disabledHint?: string;
  /** What is tested (e.g. the tool file's text): a result or error is shown only beside the
   * version of the tool it came from, never beside a changed one. */
  subject?: string;
}) {
  const [values, setValues] = useState<Record<string, string>>({});
  const [running, setRunning] = useState(false);
  const [outcome, setOutcome] = useState<{
    subject: string | undefined;
    result: ToolTest | null;
    error: string | null;
  } | null>(null);
  const current = outcome !== null && outcome.subject === props.subject ? outcome : null;
  const result = current?.result ?? null;
  const error = current?.error ?? null;
  // A parameter still without a name (just added in the form) cannot be sent: no field. Each
  // field is keyed by its name and how many same-named ones come before it, so keys stay unique
  // and a field keeps its identity (and its value) when another parameter is added or removed.
  const params = props.params.filter((p) => p.name.trim() !== "");
  const seen = new Map<string, number>();
  const keyed = params.map((p) => {
    const n = seen.get(p.name) ?? 0;
    seen.set(p.name, n + 1);
    return { p, key: `${p.name}#${n}` };
  });
  const titleId = useId();
  // Closing the panel while a test waits for permission withdraws the request.
  const waiting = useRef(false);
  useEffect(
    () => () => {
      // Unmounted: nothing is left to show a failure in.
      if (waiting.current) void attempt(commands.cancelToolTest());
    },
    [],
  );

  const run = async () => {
    const subject = props.subject;
    setRunning(true);
    setOutcome(null);
    const sent: Record<string, string> = {};
    for (const p of params) {
      const v = values[p.name];
      if (v !== undefined && v !== "") sent[p.name] = v;
    }
    waiting.current = true;
    try {
      setOutcome({ subject, result: await props.run(sent), error: null });
    } catch (e) {
      setOutcome({ subject, result: null, error: errorMessage(e) });
    } finally {
      waiting.current = false;
      setRunning(false);
    }
  };

  const ex = result?.exchange ?? null;
  return (
    <section className="test-panel" aria-labelledby={titleId} data-testid="test-panel">
      <h3 id={titleId}>Test</h3>
      <form
        onSubmit={(e) => {
          e.preventDefault();
          void run();
        }}
      >
        {params.length === 0 && <p className="muted small">This tool has no parameters.</p>}
        {keyed.map(({ p, key }) => (
          <label key={key} className="test-param">
            <span>
              <code>{p.name}</code> <span className="muted small">{p.type}</span>
              {p.required && p.default === "" ? (
                <span className="muted small"> required</span>
              ) : null}
            </span>
            {p.options.length > 0 ? (
              <select
                value={values[p.name] ?? ""}
                data-testid={`test-param-${p.name}`}
                onChange={(e) => setValues({ ...values, [p.name]: e.target.value })}
              >
                <option value="">{p.default === "" ? "(none)" : `default: ${p.default}`}</option>
                {p.options.map((v) => (
                  <option key={v}>{v}</option>
                ))}
              </select>
            ) : (
              <input
                value={values[p.name] ?? ""}
                placeholder={p.default === "" ? "" : `default: ${p.default}`}
                data-testid={`test-param-${p.name}`}
                onChange={(e) => setValues({ ...values, [p.name]: e.target.value })}
              />
            )}
          </label>
        ))}
        <div className="form-actions">
          <button type="submit" disabled={props.disabled || running} data-testid="run-test">
            {running ? <Spinner /> : null}
            Run test
          </button>
          {props.disabled && props.disabledHint && (
            <span className="muted small">{props.disabledHint}</span>
          )}
        </div>
      </form>
      {error && (
        <p role="alert" className="field-error">
          {error}
        </p>
      )}
      {result && (
        <div className="test-result" data-testid="test-result">
          <p className={result.success ? "test-ok" : "test-failed"} data-testid="test-outcome">
            {result.success ? "Succeeded" : "Failed"}
            {ex?.status != null ? ` · HTTP ${ex.status}` : ""} ·{" "}
            {ex ? `${ex.elapsed_ms} ms` : `${result.duration_ms} ms`}
          </p>
          <h4>{result.success ? "Value the model gets" : "Error the model gets"}</h4>
          <pre className="code" data-testid="test-output">
            {result.output}
          </pre>
          <details>
            <summary>Parameters sent (typed, defaults filled in)</summary>
            <pre className="code">{JSON.stringify(result.params, null, 2)}</pre>
          </details>
          {ex && (
            <>
              <details open>
                <summary>Request</summary>
                <pre className="code" data-testid="test-request">
                  {`${ex.method} ${ex.url}\n`}
                  {Object.entries(ex.request_headers)
                    .map(([k, v]) => `${k}: ${v ?? ""}`)
                    .join("\n")}
                  {ex.request_body ? `\n\n${ex.request_body}` : ""}
                </pre>
              </details>
              <details>
                <summary>Response headers</summary>
                <pre className="code">
                  {ex.response_headers.map(([k, v]) => `${k}: ${v}`).join("\n")}
                </pre>
              </details>
              <details open={!result.success}>
                <summary>
                  Raw response{ex.response_truncated ? " (first 200,000 characters)" : ""}
                </summary>
                <pre className="code" data-testid="test-response">
                  {ex.response_body}
                </pre>
              </details>
              {ex.response_extract && (
                <p className="muted small">
                  Extracted with <code>{ex.response_extract}</code>.
                </p>
              )}
            </>
          )}
          <details>
            <summary>What the model sees</summary>
            <pre className="code">{result.formatted}</pre>
          </details>
        </div>
      )}
    </section>
  );
}
