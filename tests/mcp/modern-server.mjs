// An MCP server of the 2026-07-28 generation, built on the official TypeScript SDK v2
// (@modelcontextprotocol/server, pinned in package.json), the way a server author writes one.
// Usage: node modern-server.mjs stdio          (stdio; serves 2025-era clients too)
//        node modern-server.mjs http PORT_FILE (HTTP on 127.0.0.1, a free port written to PORT_FILE)
// Tools: `add` (a + b) and `delete_file` (asks for a confirmation first with a multi round-trip
// request: `input_required` with a form and a request state, then answers the retried call).
// With a log file in MODERN_SERVER_LOG, each tool call (the protocol version in its `_meta`, a
// round's answer and state) and, over HTTP, each POST's method and `MCP-Protocol-Version` header
// are appended to it, one JSON line each.
import { appendFileSync } from "node:fs";
import {
  McpServer,
  acceptedContent,
  fromJsonSchema,
  inputRequired,
} from "@modelcontextprotocol/server";
import { serve } from "./serve.mjs";

const log = process.env.MODERN_SERVER_LOG;
const note = (entry) => log && appendFileSync(log, JSON.stringify(entry) + "\n");

function factory() {
  const server = new McpServer({ name: "modern-server", version: "2.4.0" }, { capabilities: { tools: {} } });
  server.registerTool(
    "add",
    {
      description: "Add two numbers",
      inputSchema: fromJsonSchema({
        type: "object",
        properties: { a: { type: "number" }, b: { type: "number" } },
        required: ["a", "b"],
      }),
    },
    async ({ a, b }, ctx) => {
      note({ tool: "add", version: ctx.mcpReq.envelope?.["io.modelcontextprotocol/protocolVersion"] ?? null });
      return { content: [{ type: "text", text: String(a + b) }] };
    },
  );
  server.registerTool(
    "delete_file",
    {
      description: "Delete a file, after the user confirms",
      inputSchema: fromJsonSchema({ type: "object", properties: { path: { type: "string" } }, required: ["path"] }),
    },
    async ({ path }, ctx) => {
      const answer = acceptedContent(ctx.mcpReq.inputResponses, "confirm");
      const state = ctx.mcpReq.requestState() ?? null;
      note({ tool: "delete_file", answer: answer ?? null, state });
      if (answer === undefined) {
        return inputRequired({
          inputRequests: {
            confirm: inputRequired.elicit({
              message: `Delete ${path}?`,
              requestedSchema: {
                type: "object",
                properties: { confirm: { type: "boolean", default: true, description: "Delete it" } },
                required: ["confirm"],
              },
            }),
          },
          requestState: `pending:${path}`,
        });
      }
      if (state !== `pending:${path}`) {
        return { content: [{ type: "text", text: "state lost" }], isError: true };
      }
      return { content: [{ type: "text", text: answer.confirm ? `deleted ${path}` : `kept ${path}` }] };
    },
  );
  // MODERN_LATE_TOOL_MS: a third tool, `later`, is added that long after the start, and the
  // server tells its subscribers (2026-07-28: on a `subscriptions/listen` stream).
  const late = Number(process.env.MODERN_LATE_TOOL_MS ?? 0);
  if (late > 0) {
    setTimeout(() => {
      server.registerTool("later", { description: "Added later" }, async () => ({
        content: [{ type: "text", text: "later" }],
      }));
    }, late);
  }
  return server;
}

serve(factory, {
  onPost(body, headers) {
    if (!body.length) return;
    try {
      const message = JSON.parse(body.toString("utf8"));
      note({ method: message.method ?? null, header: headers["mcp-protocol-version"] ?? null });
    } catch {}
  },
});
