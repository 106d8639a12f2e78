import { useEffect, useRef, useState, type FormEvent } from "react";
import { ConfirmButton } from "../../components/ConfirmButton";
import { Field } from "../../components/Field";
import { Spinner } from "../../components/Spinner";
import { secretRows, useSecrets } from "./useSecrets";

/** The editing key of the add form (not a valid secret name, so it never clashes). */
const NEW_SECRET = "+new";

/** Keyring secrets by name (values are never shown), and referenced ones that are missing. */
export function SecretsSection(props: {
  secretNames: readonly string[];
  missingSecrets: readonly string[];
  reload: () => Promise<void>;
}) {
  const secrets = useSecrets(props.reload);
  /** The row whose value is being set, or NEW_SECRET for the add form. */
  const [editing, setEditing] = useState<string | null>(null);
  const rows = secretRows(props.secretNames, props.missingSecrets);

  return (
    <section className="setting-group" aria-labelledby="secrets-title">
      <h2 id="secrets-title">Secrets</h2>
      <p className="muted">
        API keys and tokens live in the system keyring. Profiles and tools reference them as{" "}
        <code>{"{{NAME}}"}</code>; values are never shown.
      </p>
      {secrets.error && (
        <p className="form-errors" role="alert">
          {secrets.error}
        </p>
      )}
      {rows.length === 0 ? (
        <p className="muted" data-testid="no-secrets">
          No secrets stored.
        </p>
      ) : (
        <ul className="secret-list" aria-label="Secrets">
          {rows.map((row) => (
            <li
              key={row.name}
              className={`secret-row${row.missing ? " secret-missing" : ""}`}
              data-testid={`secret-${row.name}`}
            >
              <code className="secret-name">{row.name}</code>
              {row.missing ? (
                <span className="tag tag-missing">missing — referenced but not set</span>
              ) : (
                <span className="tag tag-ok">set</span>
              )}
              <span className="spacer" />
              {editing === row.name ? (
                <SecretValueForm
                  name={row.name}
                  busy={secrets.busy === row.name}
                  onSubmit={(value) => secrets.setSecret(row.name, value)}
                  onClose={() => setEditing(null)}
                />
              ) : (
                <span className="row-actions">
                  <button
                    type="button"
                    className={row.missing ? "primary" : undefined}
                    aria-label={`${row.stored ? "Replace" : "Set"} ${row.name}`}
                    disabled={secrets.busy !== null}
                    onClick={() => setEditing(row.name)}
                  >
                    {row.stored ? "Replace" : "Set"}
                  </button>
                  {row.stored && (
                    <ConfirmButton
                      label={`Delete ${row.name}`}
                      question={
                        <>
                          Delete <code>{row.name}</code>? Anything that references it stops working.
                        </>
                      }
                      confirmLabel="Delete"
                      disabled={secrets.busy !== null}
                      onConfirm={() => secrets.deleteSecret(row.name)}
                    >
                      {secrets.busy === row.name && <Spinner />}Delete
                    </ConfirmButton>
                  )}
                </span>
              )}
            </li>
          ))}
        </ul>
      )}
      {editing === NEW_SECRET ? (
        <NewSecretForm
          busy={secrets.busy !== null}
          onSubmit={(name, value) => secrets.setSecret(name, value)}
          onClose={() => setEditing(null)}
        />
      ) : (
        <button type="button" disabled={editing !== null} onClick={() => setEditing(NEW_SECRET)}>
          Add secret
        </button>
      )}
    </section>
  );
}

/** Set or replace one secret's value. */
function SecretValueForm(props: {
  name: string;
  busy: boolean;
  onSubmit: (value: string) => Promise<string | null>;
  onClose: () => void;
}) {
  const [value, setValue] = useState("");
  const [error, setError] = useState<string | undefined>(undefined);
  const inputRef = useRef<HTMLInputElement>(null);
  useEffect(() => inputRef.current?.focus(), []);

  const submit = async (e: FormEvent) => {
    e.preventDefault();
    const problem = await props.onSubmit(value);
    if (problem) setError(problem);
    else {
      setValue("");
      props.onClose();
    }
  };

  return (
    <form
      className="secret-form"
      onSubmit={(e) => void submit(e)}
      noValidate
      onKeyDown={(e) => e.key === "Escape" && props.onClose()}
    >
      <Field label={`Value for ${props.name}`} error={error}>
        {(c) => (
          <input
            {...c}
            ref={inputRef}
            type="password"
            autoComplete="off"
            value={value}
            disabled={props.busy}
            onChange={(e) => setValue(e.target.value)}
          />
        )}
      </Field>
      <button type="submit" className="primary" disabled={props.busy}>
        {props.busy && <Spinner />}Save
      </button>
      <button type="button" onClick={props.onClose} disabled={props.busy}>
        Cancel
      </button>
    </form>
  );
}

function NewSecretForm(props: {
  busy: boolean;
  onSubmit: (name: string, value: string) => Promise<string | null>;
  onClose: () => void;
}) {
  const [name, setName] = useState("");
  const [value, setValue] = useState("");
  const [error, setError] = useState<string | undefined>(undefined);
  const nameRef = useRef<HTMLInputElement>(null);
  useEffect(() => nameRef.current?.focus(), []);

  const submit = async (e: FormEvent) => {
    e.preventDefault();
    const problem = await props.onSubmit(name, value);
    if (problem) setError(problem);
    else {
      setValue("");
      props.onClose();
    }
  };

  return (
    <form
      className="secret-form new-secret"
      onSubmit={(e) => void submit(e)}
      noValidate
      aria-label="Add secret"
      onKeyDown={(e) => e.key === "Escape" && props.onClose()}
    >
      <Field label="Secret name" hint="Letters, digits and _, e.g. GITHUB_TOKEN.">
        {(c) => (
          <input
            {...c}
            ref={nameRef}
            value={name}
            autoComplete="off"
            spellCheck={false}
            disabled={props.busy}
            onChange={(e) => setName(e.target.value)}
          />
        )}
      </Field>
      <Field label="Value" error={error}>
        {(c) => (
          <input
            {...c}
            type="password"
            autoComplete="off"
            value={value}
            disabled={props.busy}
            onChange={(e) => setValue(e.target.value)}
          />
        )}
      </Field>
      <button type="submit" className="primary" disabled={props.busy}>
        {props.busy && <Spinner />}Save secret
      </button>
      <button type="button" onClick={props.onClose} disabled={props.busy}>
        Cancel
      </button>
    </form>
  );
}
