import type { YAMLError } from "yaml";

/** What to do about each kind of YAML error the `yaml` parser reports (by its stable code). */
const HINTS: Partial<Record<YAMLError["code"], string>> = {
  BLOCK_AS_IMPLICIT_KEY:
    'a value that contains ": " must be quoted, e.g. description: "Price: today"; or this line is indented deeper than the field above it.',
  MULTILINE_IMPLICIT_KEY:
    "a field name must fit on one line: check the indentation, and quote a value that contains a colon.",
  BAD_INDENT:
    "fields at the same level start at the same column, and a [list] or {map} is closed with ] or }.",
  TAB_AS_INDENT: "indent with spaces, not tabs.",
  MISSING_CHAR: "a quote, bracket or colon is missing: close every quote and bracket you open.",
  DUPLICATE_KEY: "a field appears twice: keep one.",
  BAD_SCALAR_START: "quote a value that starts with @, ` or another special character.",
  UNEXPECTED_TOKEN:
    "something here is not YAML: quote values with special characters, and check the indentation.",
  MULTIPLE_DOCS: "the frontmatter holds one document: remove the extra --- line.",
};

/**
 * A YAML error as a person can act on it: the parser's own sentence, without the location and
 * source excerpt it appends (the line is shown separately), and a hint of what to change.
 */
export function explainYamlError(e: YAMLError): string {
  const first = e.message.split("\n")[0] ?? "";
  const said = first.replace(/ at line \d+, column \d+:?$/, "").trim() || "The YAML does not parse";
  const hint = HINTS[e.code];
  return hint ? `${said}. Hint: ${hint}` : `${said}.`;
}
