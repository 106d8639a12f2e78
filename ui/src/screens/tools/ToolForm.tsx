import type { ConfigError } from "../../bindings";
import { Field } from "../../components/Field";
import {
  BODY_METHODS,
  emptyParam,
  METHODS,
  PARAM_LOCATIONS,
  PARAM_TYPES,
  type ParamDraft,
  type ParamType,
  type ToolDraft,
} from "./toolDraft";

/** The error the backend located at `field` (exactly, or a sub-field of it). */
export function errorAt(errors: readonly ConfigError[], field: string): string | undefined {
  return errors.find((e) => e.field === field || e.field?.startsWith(`${field}.`))?.message;
}

const LOCATION_LABELS: Record<string, string> = {
  path: "Path",
  query: "Query",
  header: "Header",
  body: "Body",
};

/** The HTTP tool form: every field of a tool file. Changes go up as a whole new draft. */
export function ToolForm(props: {
  draft: ToolDraft;
  errors: readonly ConfigError[];
  onChange: (draft: ToolDraft) => void;
}) {
  const { draft, errors, onChange } = props;
  const set = <K extends keyof ToolDraft>(key: K, value: ToolDraft[K]) =>
    onChange({ ...draft, [key]: value });
  const setParam = (i: number, patch: Partial<ParamDraft>) =>
    set(
      "parameters",
      draft.parameters.map((p, j) => (j === i ? { ...p, ...patch } : p)),
    );
  const defaultIn = BODY_METHODS.includes(draft.method.toUpperCase()) ? "body" : "query";
  return (
    <div className="tool-form" data-testid="tool-form">
      <div className="form-grid">
        <Field
          label="Name"
          error={errorAt(errors, "name")}
          hint="Letters, digits, _ - . : — what the model calls."
        >
          {(c) => (
            <input
              {...c}
              value={draft.name}
              data-testid="tool-name"
              onChange={(e) => set("name", e.target.value)}
            />
          )}
        </Field>
        <Field
          label="Permission"
          error={errorAt(errors, "permission")}
          hint="Confirm asks before every call."
        >
          {(c) => (
            <select
              {...c}
              value={draft.permission}
              data-testid="tool-permission"
              onChange={(e) => set("permission", e.target.value === "auto" ? "auto" : "confirm")}
            >
              <option value="confirm">confirm</option>
              <option value="auto">auto</option>
            </select>
          )}
        </Field>
        <Field label="Method" error={errorAt(errors, "method")}>
          {(c) => (
            <select
              {...c}
              value={draft.method}
              data-testid="tool-method"
              onChange={(e) => set("method", e.target.value)}
            >
              {!METHODS.includes(draft.method as (typeof METHODS)[number]) && (
                <option value={draft.method}>{draft.method}</option>
              )}
              {METHODS.map((m) => (
                <option key={m} value={m}>
                  {m}
                </option>
              ))}
            </select>
          )}
        </Field>
        <Field label="Timeout (seconds)" error={errorAt(errors, "timeout")} hint="Default 30.">
          {(c) => (
            <input
              {...c}
              inputMode="numeric"
              value={draft.timeout}
              placeholder="30"
              data-testid="tool-timeout"
              onChange={(e) => set("timeout", e.target.value)}
            />
          )}
        </Field>
      </div>
      <Field
        label="Endpoint"
        error={errorAt(errors, "endpoint")}
        hint="A full URL; {{NAME}} is filled from the keyring, environment or .env at call time."
      >
        {(c) => (
          <input
            {...c}
            value={draft.endpoint}
            data-testid="tool-endpoint"
            placeholder="https://api.example.com/v1/thing"
            onChange={(e) => set("endpoint", e.target.value)}
          />
        )}
      </Field>
      <Field
        label="Description"
        error={errorAt(errors, "description")}
        hint="One line the model reads."
      >
        {(c) => (
          <input
            {...c}
            value={draft.description}
            data-testid="tool-description"
            placeholder="What it does and when to use it"
            onChange={(e) => set("description", e.target.value)}
          />
        )}
      </Field>
      <Field
        label="Response extract (JSONPath)"
        error={errorAt(errors, "response_extract")}
        hint="RFC 9535, e.g. $.data.price. Empty returns the whole response."
      >
        {(c) => (
          <input
            {...c}
            value={draft.response_extract}
            data-testid="tool-extract"
            placeholder="$.data.value"
            onChange={(e) => set("response_extract", e.target.value)}
          />
        )}
      </Field>

      <fieldset className="form-table">
        <legend>Headers</legend>
        {errorAt(errors, "headers") && (
          <p className="field-error" role="alert">
            {errorAt(errors, "headers")}
          </p>
        )}
        {draft.headers.map((h, i) => (
          <div className="form-table-row" key={i}>
            <input
              aria-label={`Header ${i + 1} name`}
              value={h.name}
              placeholder="Authorization"
              onChange={(e) =>
                set(
                  "headers",
                  draft.headers.map((x, j) => (j === i ? { ...x, name: e.target.value } : x)),
                )
              }
            />
            <input
              aria-label={`Header ${i + 1} value`}
              value={h.value}
              placeholder="Bearer {{API_KEY}}"
              onChange={(e) =>
                set(
                  "headers",
                  draft.headers.map((x, j) => (j === i ? { ...x, value: e.target.value } : x)),
                )
              }
            />
            <button
              type="button"
              className="link-button"
              aria-label={`Remove header ${h.name || i + 1}`}
              onClick={() =>
                set(
                  "headers",
                  draft.headers.filter((_, j) => j !== i),
                )
              }
            >
              Remove
            </button>
          </div>
        ))}
        <button
          type="button"
          onClick={() => set("headers", [...draft.headers, { name: "", value: "" }])}
        >
          Add header
        </button>
      </fieldset>

      <fieldset className="form-table">
        <legend>Parameters</legend>
        {draft.parameters.length > 0 && (
          <div className="param-scroll">
            <table className="param-table param-editor">
              <thead>
                <tr>
                  <th>Name</th>
                  <th>Type</th>
                  <th>Required</th>
                  <th>Default</th>
                  <th>
                    <span className="visually-hidden">Actions</span>
                  </th>
                </tr>
              </thead>
              <tbody>
                {draft.parameters.map((p, i) => {
                  const err = errorAt(errors, `parameters[${i}]`);
                  // Two rows per parameter: name, type, required and default in columns, then its
                  // description, allowed values, where it is sent and the JSON flag across the
                  // table (wrapping as needed), so the table fits the form's column.
                  return [
                    <tr
                      key={i}
                      className={err ? "row-invalid" : undefined}
                      data-testid={`param-row-${i}`}
                    >
                      <td>
                        <input
                          aria-label={`Parameter ${i + 1} name`}
                          value={p.name}
                          onChange={(e) => setParam(i, { name: e.target.value })}
                        />
                        {err && (
                          <p className="field-error" role="alert">
                            {err}
                          </p>
                        )}
                      </td>
                      <td>
                        <select
                          aria-label={`Parameter ${i + 1} type`}
                          value={p.type}
                          onChange={(e) => setParam(i, { type: e.target.value as ParamType })}
                        >
                          {PARAM_TYPES.map((t) => (
                            <option key={t}>{t}</option>
                          ))}
                        </select>
                      </td>
                      <td>
                        <input
                          type="checkbox"
                          aria-label={`Parameter ${i + 1} required`}
                          checked={p.required}
                          onChange={(e) => setParam(i, { required: e.target.checked })}
                        />
                      </td>
                      <td>
                        <input
                          aria-label={`Parameter ${i + 1} default`}
                          value={p.default}
                          onChange={(e) => setParam(i, { default: e.target.value })}
                        />
                      </td>
                      <td>
                        <button
                          type="button"
                          className="link-button"
                          aria-label={`Remove parameter ${p.name || i + 1}`}
                          onClick={() =>
                            set(
                              "parameters",
                              draft.parameters.filter((_, j) => j !== i),
                            )
                          }
                        >
                          Remove
                        </button>
                      </td>
                    </tr>,
                    <tr key={`${i}-description`} className="param-description-row">
                      <td colSpan={5}>
                        <div className="param-more">
                          <input
                            className="param-description"
                            aria-label={`Parameter ${i + 1} description`}
                            placeholder="Description: what the model should pass"
                            value={p.description}
                            onChange={(e) => setParam(i, { description: e.target.value })}
                          />
                          <label className="param-more-field">
                            <span aria-hidden="true">Allowed values</span>
                            <input
                              aria-label={`Parameter ${i + 1} allowed values`}
                              value={p.enum}
                              placeholder="a, b, c"
                              onChange={(e) => setParam(i, { enum: e.target.value })}
                            />
                          </label>
                          <label className="param-more-field">
                            <span aria-hidden="true">Sent in</span>
                            <select
                              aria-label={`Parameter ${i + 1} sent in`}
                              aria-describedby="param-in-hint"
                              title={`Where it travels. Default: ${defaultIn === "body" ? "the JSON body (POST/PUT/PATCH)" : "the query string (not POST/PUT/PATCH)"}.`}
                              value={p.in}
                              onChange={(e) => setParam(i, { in: e.target.value })}
                            >
                              <option value="">Default ({defaultIn})</option>
                              {PARAM_LOCATIONS.map((l) => (
                                <option key={l} value={l}>
                                  {LOCATION_LABELS[l]}
                                </option>
                              ))}
                              {p.in !== "" &&
                                !(PARAM_LOCATIONS as readonly string[]).includes(p.in) && (
                                  <option value={p.in}>{p.in} (unknown)</option>
                                )}
                            </select>
                          </label>
                          {(p.type === "string" || p.json) && (
                            <label className="param-more-field">
                              <span aria-hidden="true">JSON</span>
                              <input
                                type="checkbox"
                                aria-label={`Parameter ${i + 1} JSON`}
                                aria-describedby="param-json-hint"
                                title="The value is JSON text (an object, an array…), sent in the body as that JSON value."
                                checked={p.json}
                                onChange={(e) => setParam(i, { json: e.target.checked })}
                              />
                            </label>
                          )}
                        </div>
                      </td>
                    </tr>,
                  ];
                })}
              </tbody>
            </table>
          </div>
        )}
        {draft.parameters.length > 0 && (
          <div className="muted small param-hints">
            <p id="param-in-hint">
              Sent in: Default is the JSON body for POST, PUT and PATCH and the query string
              otherwise (now: {defaultIn}). Path fills <code>{"{name}"}</code> in the endpoint;
              Header sends it as a request header.
            </p>
            <p id="param-json-hint">
              JSON: for a string parameter sent in the body, its value is JSON text (an object, an
              array…) sent as that JSON value.
            </p>
          </div>
        )}
        <button
          type="button"
          onClick={() => set("parameters", [...draft.parameters, emptyParam()])}
        >
          Add parameter
        </button>
      </fieldset>

      <Field label="Usage notes (Markdown)" hint="Appended to the description the model reads.">
        {(c) => (
          <textarea
            {...c}
            rows={5}
            value={draft.notes}
            data-testid="tool-notes"
            placeholder="Optional: when to call it, what the result means"
            onChange={(e) => set("notes", e.target.value)}
          />
        )}
      </Field>
    </div>
  );
}
