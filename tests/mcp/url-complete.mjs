// A stdio MCP server for the test of `notifications/elicitation/complete`: `sign-up` asks the
// client to open a page (a URL elicitation with id "signup-1") and answers with the client's
// reply (a tool without an input schema gets only `extra`); `finish` plays the page's back end: it tells the client that elicitation is complete.
import { McpServer } from "@modelcontextprotocol/sdk/server/mcp.js";
import { StdioServerTransport } from "@modelcontextprotocol/sdk/server/stdio.js";
import { ElicitResultSchema } from "@modelcontextprotocol/sdk/types.js";

const ID = "signup-1";
const server = new McpServer({ name: "url-complete", version: "1.0.0" });
server.registerTool("sign-up", { description: "Sign up on a web page" }, async (extra) => {
  const reply = await extra.sendRequest(
    {
      method: "elicitation/create",
      params: { mode: "url", url: "https://example.com/sign-up", message: "Sign up there", elicitationId: ID },
    },
    ElicitResultSchema,
  );
  return { content: [{ type: "text", text: `the client answered ${reply.action}` }] };
});
server.registerTool("finish", { description: "The page is done" }, async () => {
  await server.server.createElicitationCompletionNotifier(ID)();
  return { content: [{ type: "text", text: "completed" }] };
});
await server.connect(new StdioServerTransport());
