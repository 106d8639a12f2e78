import type { RuleOrigin, RuleSpec, RuleView } from "../../bindings";

/** Where a rule is written, for people: "Settings, settings.yaml:3" or "agent NAME, FILE:LINE". */
export function ruleOrigin(origin: RuleOrigin): string {
  switch (origin.kind) {
    case "global":
      return `Settings, ${origin.file}:${origin.line}`;
    case "agent":
      return `agent ${origin.agent}, ${origin.file}:${origin.line}`;
    default:
      return "a conversation's grant";
  }
}

/** `tool` and its `when` entries in one short line: `web_fetch when url=https://docs.rs/**`. */
export function ruleText(spec: RuleSpec | null): string {
  if (!spec) return "(not a rule)";
  const when = Object.entries(spec.when ?? {}).map(([k, v]) => `${k}=${v ?? ""}`);
  return when.length > 0 ? `${spec.tool} when ${when.join(" ")}` : spec.tool;
}

/** The rules (valid or ignored) whose tool pattern covers `tool`: the Tools page's lines. */
export function rulesFor(tool: string, rules: RuleView[]): RuleView[] {
  return rules.filter((r) => r.tools.includes(tool));
}

/** One `when` row of the form. */
export interface WhenRow {
  key: string;
  pattern: string;
}

/** The form's draft of a rule. */
export interface RuleDraft {
  tool: string;
  when: WhenRow[];
  action: RuleSpec["action"];
}

export const EMPTY_DRAFT: RuleDraft = { tool: "", when: [], action: "confirm" };

export function draftOf(spec: RuleSpec): RuleDraft {
  return {
    tool: spec.tool,
    when: Object.entries(spec.when ?? {}).map(([key, pattern]) => ({
      key,
      pattern: pattern ?? "",
    })),
    action: spec.action,
  };
}

/** The draft as a rule, or what to fix first (the backend checks the patterns and names). */
export function specOf(draft: RuleDraft): RuleSpec | string {
  const tool = draft.tool.trim();
  if (!tool) return "Name a tool, or use * for every tool.";
  const when: Record<string, string> = {};
  for (const row of draft.when) {
    const key = row.key.trim();
    if (!key) return "Every condition needs a parameter name (or $host, $url, $method).";
    if (key in when) return `The parameter ${key} appears twice; keep one.`;
    when[key] = row.pattern;
  }
  return { tool, when, action: draft.action };
}
