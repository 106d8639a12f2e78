import { useId, type ReactNode } from "react";

/** What a `Field` passes to its control so the label, hint and error are announced with it. */
export interface FieldControlProps {
  id: string;
  "aria-describedby"?: string;
  "aria-invalid"?: true;
}

/**
 * A labelled form control with an optional hint and error; the error is in `role=alert`, and
 * the control is marked invalid and described by both.
 */
export function Field(props: {
  label: ReactNode;
  hint?: ReactNode;
  error?: string | undefined;
  className?: string;
  children: (control: FieldControlProps) => ReactNode;
}) {
  const id = useId();
  const hintId = `${id}-hint`;
  const errorId = `${id}-error`;
  const describedBy = [props.hint ? hintId : null, props.error ? errorId : null]
    .filter(Boolean)
    .join(" ");
  const control: FieldControlProps = { id };
  if (describedBy) control["aria-describedby"] = describedBy;
  if (props.error) control["aria-invalid"] = true;
  return (
    <div className={`field${props.error ? " field-invalid" : ""} ${props.className ?? ""}`}>
      <label htmlFor={id}>{props.label}</label>
      {props.children(control)}
      {props.hint && (
        <p className="field-hint" id={hintId}>
          {props.hint}
        </p>
      )}
      {props.error && (
        <p className="field-error" id={errorId} role="alert">
          {props.error}
        </p>
      )}
    </div>
  );
}
