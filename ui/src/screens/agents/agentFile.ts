import { parseDocument } from "yaml";
import { splitFrontmatter } from "../tools/toolDraft";

/** An agent file's fields, for display (the backend's loader is what validates). */
export type AgentView = {
  name: string;
  description: string;
  model: string | null;
  tools: [string, string][];
  internal: boolean;
  maxToolRounds: number | null;
  rolePrompt: string;
};

/** Read an agent file's fields; `null` when it does not parse. */
export function readAgent(text: string): AgentView | null {
  const split = splitFrontmatter(text);
  if (!split) return null;
  const doc = parseDocument(split.yaml);
  if (doc.errors.length > 0) return null;
  const y = (doc.toJS() ?? {}) as Record<string, unknown>;
  const tools = y.tools && typeof y.tools === "object" ? (y.tools as Record<string, unknown>) : {};
  return {
    name: typeof y.name === "string" ? y.name : "",
    description: typeof y.description === "string" ? y.description : "",
    model: typeof y.model === "string" ? y.model : null,
    tools: Object.entries(tools).map(([k, v]) => [k, String(v)]),
    internal: y.internal === true,
    maxToolRounds: typeof y.max_tool_rounds === "number" ? y.max_tool_rounds : null,
    rolePrompt: split.body.trim(),
  };
}

export const NEW_AGENT = `---
name: new_agent
description: "What this agent does, in one line (other agents read it before handing over)"
model: default
tools:
  create_artifact: auto
  read_artifact: auto
max_tool_rounds: 10
---

You are … Describe the agent's role, how it should work and what it should answer with.
`;
