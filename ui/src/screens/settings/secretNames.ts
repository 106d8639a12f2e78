/** Secret names and the `{{NAME}}` templates that reference them (same rules as the engine). */

const NAME = /^[A-Za-z_][A-Za-z0-9_]*$/;
const TEMPLATE =
  /^\s*(?:\{\{\s*([A-Za-z_][A-Za-z0-9_]*)\s*\}\}|<<\s*([A-Za-z_][A-Za-z0-9_]*)\s*>>)\s*$/;

/** Letters, digits and `_`, not starting with a digit. */
export function isValidSecretName(name: string): boolean {
  return NAME.test(name);
}

export const SECRET_NAME_RULE = "Use letters, digits and _, not starting with a digit.";

/** `{{NAME}}`. */
export function templateFor(name: string): string {
  return `{{${name}}}`;
}

/** The name in a value that is exactly one template, e.g. `OPENAI_API_KEY` for `{{OPENAI_API_KEY}}`. */
export function templateName(value: string | null | undefined): string | null {
  if (!value) return null;
  const m = TEMPLATE.exec(value);
  return m ? (m[1] ?? m[2] ?? null) : null;
}

/** `<PROFILE>_API_KEY` for a profile name: `my-model` → `MY_MODEL_API_KEY`. */
export function secretNameForProfile(profileName: string): string {
  let base = profileName
    .trim()
    .toUpperCase()
    .replace(/[^A-Z0-9]+/g, "_")
    .replace(/^_+|_+$/g, "");
  if (base === "") base = "MODEL";
  if (/^[0-9]/.test(base)) base = `_${base}`;
  return `${base}_API_KEY`;
}
