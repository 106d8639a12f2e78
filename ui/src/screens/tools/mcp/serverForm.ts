/** The "Add MCP server" form: one server, written out as the JSON the paste box takes. */
export type ServerForm = {
  name: string;
  kind: "stdio" | "http";
  command: string;
  /** One argument a line (so arguments may hold spaces). */
  args: string;
  /** `KEY=value` a line. */
  env: string;
  url: string;
  /** `Name: value` a line. */
  headers: string;
};

export const EMPTY_FORM: ServerForm = {
  name: "",
  kind: "stdio",
  command: "",
  args: "",
  env: "",
  url: "",
  headers: "",
};

const lines = (text: string) =>
  text
    .split("\n")
    .map((l) => l.trim())
    .filter((l) => l !== "");

/** `KEY<sep>value` lines as an object; a line without the separator keeps an empty value, so
 * the engine's check names the key rather than the line silently going missing. */
function pairs(text: string, sep: string): Record<string, string> {
  const out: Record<string, string> = {};
  for (const line of lines(text)) {
    const at = line.indexOf(sep);
    const key = (at < 0 ? line : line.slice(0, at)).trim();
    out[key] = at < 0 ? "" : line.slice(at + sep.length).trim();
  }
  return out;
}

/** The `{"mcpServers": {NAME: {...}}}` block of the form (checked by the engine on save). */
export function serverJson(form: ServerForm): string {
  const entry: Record<string, unknown> = {};
  if (form.kind === "stdio") {
    entry.command = form.command.trim();
    const args = lines(form.args);
    if (args.length > 0) entry.args = args;
    const env = pairs(form.env, "=");
    if (Object.keys(env).length > 0) entry.env = env;
  } else {
    entry.url = form.url.trim();
    const headers = pairs(form.headers, ":");
    if (Object.keys(headers).length > 0) entry.headers = headers;
  }
  return `${JSON.stringify({ mcpServers: { [form.name.trim()]: entry } }, null, 2)}\n`;
}
