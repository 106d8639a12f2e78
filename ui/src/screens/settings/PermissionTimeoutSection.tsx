import { useState, type FormEvent } from "react";
import { Field } from "../../components/Field";
import { Spinner } from "../../components/Spinner";
import { TIMEOUT_MAX, TIMEOUT_MIN } from "./permissionTimeout";
import { usePermissionTimeout } from "./usePermissionTimeout";

/** How long a permission request waits for an answer before it counts as denied. */
export function PermissionTimeoutSection(props: { seconds: number; reload: () => Promise<void> }) {
  const [text, setText] = useState(String(props.seconds));
  const timeout = usePermissionTimeout(props.reload);
  const unchanged = text.trim() === String(props.seconds);

  const submit = (e: FormEvent) => {
    e.preventDefault();
    void timeout.save(text);
  };

  return (
    <section className="setting-group" aria-labelledby="timeout-title">
      <h2 id="timeout-title">Permissions</h2>
      <form className="inline-form" onSubmit={submit} noValidate>
        <Field
          label="Permission timeout (seconds)"
          hint={`A request nobody answers within this time is denied. ${TIMEOUT_MIN}–${TIMEOUT_MAX} seconds.`}
          error={timeout.error ?? undefined}
        >
          {(c) => (
            <div className="input-row">
              <input
                {...c}
                type="number"
                inputMode="numeric"
                min={TIMEOUT_MIN}
                max={TIMEOUT_MAX}
                step={1}
                value={text}
                disabled={timeout.saving}
                onChange={(e) => {
                  setText(e.target.value);
                  timeout.clear();
                }}
              />
              <button type="submit" className="primary" disabled={timeout.saving || unchanged}>
                {timeout.saving && <Spinner />}
                {timeout.saving ? "Saving…" : "Save"}
              </button>
              <span role="status" className="saved-note">
                {timeout.saved ? "Saved." : ""}
              </span>
            </div>
          )}
        </Field>
      </form>
    </section>
  );
}
