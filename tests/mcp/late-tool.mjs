// A stdio MCP server that adds a second tool a moment after it starts and tells the client
// (notifications/tools/list_changed), for the test of the client's refresh.
import { McpServer } from "@modelcontextprotocol/sdk/server/mcp.js";
import { StdioServerTransport } from "@modelcontextprotocol/sdk/server/stdio.js";

const server = new McpServer({ name: "late-tool", version: "1.0.0" });
const text = (t) => async () => ({ content: [{ type: "text", text: t }] });
server.registerTool("first", { description: "The first tool" }, text("one"));
await server.connect(new StdioServerTransport());
setTimeout(() => {
  server.registerTool("second", { description: "Added later" }, text("two"));
}, Number(process.argv[2] ?? 1000));
