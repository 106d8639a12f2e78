// A stdio MCP server whose tool `text` answers with `mb` megabytes of text, for the test of
// the client's message size limit.
import { McpServer } from "@modelcontextprotocol/sdk/server/mcp.js";
import { StdioServerTransport } from "@modelcontextprotocol/sdk/server/stdio.js";
import { z } from "zod";

const server = new McpServer({ name: "big-result", version: "1.0.0" });
server.registerTool(
  "text",
  { description: "Answers with MB megabytes of text", inputSchema: { mb: z.number() } },
  async ({ mb }) => ({ content: [{ type: "text", text: "x".repeat(Math.round(mb * 1024 * 1024)) }] }),
);
await server.connect(new StdioServerTransport());
