import type { ElicitationField, ElicitationForm, JsonValue } from "../bindings";

/** What a field's control holds: text for text and number inputs, a flag, or chosen values. */
export type FieldValue = string | boolean | string[];

/** The values a form starts with: every field's default (the engine's parse of the schema). */
export function initialValues(form: ElicitationForm): Record<string, FieldValue> {
  const values: Record<string, FieldValue> = {};
  for (const field of form.fields) {
    const kind = field.kind;
    switch (kind.type) {
      case "text":
      case "choice":
        values[field.name] = kind.default ?? "";
        break;
      case "number":
        values[field.name] = kind.default === null ? "" : String(kind.default);
        break;
      case "boolean":
        values[field.name] = kind.default ?? false;
        break;
      case "multi_choice":
        values[field.name] = [...kind.default];
        break;
    }
  }
  return values;
}

function isUri(text: string): boolean {
  try {
    new URL(text);
    return true;
  } catch {
    return false;
  }
}

const EMAIL = /^[^\s@]+@[^\s@]+\.[^\s@.]+$/;
const DATE = /^\d{4}-\d{2}-\d{2}$/;
const DATE_TIME = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}(:\d{2}(\.\d+)?)?(Z|[+-]\d{2}:\d{2})$/i;

/** The engine's checks (crates/engine/src/mcp/elicitation.rs), run as the user types so a
 * mistake shows next to its field; the engine checks again before anything is sent. */
function checkText(field: ElicitationField, text: string): string | null {
  const kind = field.kind;
  if (kind.type !== "text") return null;
  const n = [...text].length;
  if (kind.min_length !== null && n < kind.min_length)
    return `must be at least ${kind.min_length} characters`;
  if (kind.max_length !== null && n > kind.max_length)
    return `must be at most ${kind.max_length} characters`;
  switch (kind.format) {
    case "email":
      return EMAIL.test(text) ? null : "must be an email address (name@example.com)";
    case "uri":
      return isUri(text) ? null : "must be a full address with its scheme (https://…)";
    case "date":
      return DATE.test(text) && !Number.isNaN(Date.parse(text))
        ? null
        : "must be a date (YYYY-MM-DD)";
    case "date-time":
      return DATE_TIME.test(text) && !Number.isNaN(Date.parse(text))
        ? null
        : "must be a date and time (YYYY-MM-DDThh:mm:ssZ)";
    default:
      return null;
  }
}

function checkNumber(field: ElicitationField, text: string): [number | null, string | null] {
  const kind = field.kind;
  if (kind.type !== "number") return [null, null];
  const n = Number(text.trim());
  if (text.trim() === "" || !Number.isFinite(n)) return [null, "must be a number"];
  if (kind.integer && !Number.isInteger(n)) return [null, "must be a whole number"];
  if (kind.minimum !== null && n < kind.minimum) return [null, `must be at least ${kind.minimum}`];
  if (kind.maximum !== null && n > kind.maximum) return [null, `must be at most ${kind.maximum}`];
  return [n, null];
}

/** The answer to send and the problems per field (empty when it may be sent). Empty optional
 * fields are left out; a required one must be filled. */
export function validateForm(
  form: ElicitationForm,
  values: Record<string, FieldValue>,
): { content: Record<string, JsonValue>; errors: Record<string, string> } {
  const content: Record<string, JsonValue> = {};
  const errors: Record<string, string> = {};
  for (const field of form.fields) {
    const value = values[field.name];
    const kind = field.kind;
    if (kind.type === "boolean") {
      content[field.name] = value === true;
      continue;
    }
    if (kind.type === "multi_choice") {
      const chosen = Array.isArray(value) ? value : [];
      if (chosen.length === 0 && !field.required && kind.min_items === null) continue;
      if (kind.min_items !== null && chosen.length < kind.min_items)
        errors[field.name] = `choose at least ${kind.min_items}`;
      else if (kind.max_items !== null && chosen.length > kind.max_items)
        errors[field.name] = `choose at most ${kind.max_items}`;
      else if (chosen.length === 0) errors[field.name] = "required";
      else content[field.name] = chosen;
      continue;
    }
    const text = typeof value === "string" ? value : "";
    if (text === "") {
      if (field.required) errors[field.name] = "required";
      continue;
    }
    if (kind.type === "number") {
      const [n, error] = checkNumber(field, text);
      if (error) errors[field.name] = error;
      else if (n !== null) content[field.name] = n;
      continue;
    }
    const error = checkText(field, text);
    if (error) errors[field.name] = error;
    else content[field.name] = text;
  }
  return { content, errors };
}
