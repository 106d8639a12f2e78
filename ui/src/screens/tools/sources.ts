import type { ToolInfo } from "../../bindings";

/** How the app names a tool's source (the Tools page's badge). */
export const SOURCE_LABEL: Record<string, string> = {
  builtin: "built-in",
  artifact: "artifact",
  http: "HTTP",
  mcp: "MCP",
  skill: "skill",
};

/** The order sources are listed in; an unknown source comes after these. */
const SOURCE_ORDER = ["builtin", "artifact", "http", "mcp", "skill"];

/** One group of tools of the same source (an MCP server's tools are a group of their own). */
export type ToolGroup = { key: string; label: string; tools: ToolInfo[] };

const capitalized = (s: string) => s.charAt(0).toUpperCase() + s.slice(1);

/** The group heading of a tool: "Built-in", "Artifact", "HTTP", "MCP server github"… */
function groupOf(tool: ToolInfo): { key: string; label: string } {
  if (tool.source === "mcp")
    return { key: `mcp:${tool.server ?? ""}`, label: `MCP server ${tool.server ?? "?"}` };
  return { key: tool.source, label: capitalized(SOURCE_LABEL[tool.source] ?? tool.source) };
}

/** `tools` grouped by source, in the sources' order (MCP servers by name), each group's tools
 * in the given order. */
export function groupBySource(tools: readonly ToolInfo[]): ToolGroup[] {
  const groups = new Map<string, ToolGroup>();
  for (const tool of tools) {
    const { key, label } = groupOf(tool);
    let group = groups.get(key);
    if (!group) {
      group = { key, label, tools: [] };
      groups.set(key, group);
    }
    group.tools.push(tool);
  }
  const rank = (key: string) => {
    const i = SOURCE_ORDER.indexOf(key.split(":")[0] ?? key);
    return i === -1 ? SOURCE_ORDER.length : i;
  };
  return [...groups.values()].sort(
    (a, b) => rank(a.key) - rank(b.key) || a.key.localeCompare(b.key),
  );
}
