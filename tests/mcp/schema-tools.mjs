// A stdio MCP server for the tests of tool schemas and listings, on the SDK's low-level server
// (its tool schemas go out exactly as written here).
// Usage: node schema-tools.mjs LOG [PAGES] [PER_PAGE] [DESCRIPTION_CHARS]
// - `book`: a JSON Schema 2020-12 inputSchema (`$schema`, `$defs`, `$ref`,
//   `additionalProperties: false`); each call's arguments are appended to LOG, one JSON line.
// - PAGES pages of PER_PAGE more tools `tool_P_N` (default none), each `tools/list` page with a
//   `nextCursor` until the last ("forever" never ends), their descriptions DESCRIPTION_CHARS
//   long (default short), as is then the description of their one parameter `q`.
import { appendFileSync } from "node:fs";
import { Server } from "@modelcontextprotocol/sdk/server/index.js";
import { StdioServerTransport } from "@modelcontextprotocol/sdk/server/stdio.js";
import { CallToolRequestSchema, ListToolsRequestSchema } from "@modelcontextprotocol/sdk/types.js";

const [log, pagesArg = "0", perPageArg = "0", descArg = "0"] = process.argv.slice(2);
const forever = pagesArg === "forever";
const pages = forever ? Infinity : Number(pagesArg);
const perPage = Number(perPageArg);
const descChars = Number(descArg);

const BOOK_SCHEMA = {
  $schema: "https://json-schema.org/draft/2020-12/schema",
  type: "object",
  $defs: {
    address: {
      type: "object",
      properties: { street: { type: "string" }, city: { type: "string" } },
      required: ["street"],
      additionalProperties: false,
    },
  },
  properties: {
    name: { type: "string", description: "Who books" },
    address: { $ref: "#/$defs/address" },
  },
  required: ["name", "address"],
  additionalProperties: false,
};

const book = { name: "book", description: "Books a visit", inputSchema: BOOK_SCHEMA };

const server = new Server({ name: "schema-tools", version: "1.0.0" }, { capabilities: { tools: {} } });
server.setRequestHandler(ListToolsRequestSchema, async (request) => {
  const page = Number(request.params?.cursor ?? 0);
  const tools = page === 0 ? [book] : [];
  if (page < pages) {
    for (let n = 0; n < perPage; n++) {
      tools.push({
        name: `tool_${page}_${n}`,
        description: descChars > 0 ? "d".repeat(descChars) : `Tool ${n} of page ${page}`,
        inputSchema: {
          type: "object",
          properties: descChars > 0 ? { q: { type: "string", description: "p".repeat(descChars) } } : {},
        },
      });
    }
  }
  const more = forever || page + 1 < pages;
  return more ? { tools, nextCursor: String(page + 1) } : { tools };
});
server.setRequestHandler(CallToolRequestSchema, async (request) => {
  appendFileSync(log, JSON.stringify(request.params.arguments ?? {}) + "\n");
  return { content: [{ type: "text", text: `booked ${JSON.stringify(request.params.arguments)}` }] };
});
await server.connect(new StdioServerTransport());
