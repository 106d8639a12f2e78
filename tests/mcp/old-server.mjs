// A stdio MCP server of an older generation, written by hand: it speaks only 2025-06-18 (it
// answers `initialize` with that version whatever the client asks for) and, like some servers
// in the wild, answers every request it does not know (`server/discover` among them) with an
// empty result instead of an error. One tool: `echo`. Each method received is appended to the
// log file argv[2], one per line.
import { appendFileSync } from "node:fs";
import { createInterface } from "node:readline";

const [log] = process.argv.slice(2);
const send = (message) => process.stdout.write(JSON.stringify(message) + "\n");
createInterface({ input: process.stdin }).on("line", (line) => {
  const { id, method, params } = JSON.parse(line);
  if (log) appendFileSync(log, `${method}\n`);
  if (id === undefined) return; // notifications
  switch (method) {
    case "initialize":
      return send({ jsonrpc: "2.0", id, result: {
        protocolVersion: "2025-06-18",
        serverInfo: { name: "old-server", version: "0.9.0" },
        capabilities: { tools: {} },
      } });
    case "tools/list":
      return send({ jsonrpc: "2.0", id, result: { tools: [{
        name: "echo",
        description: "Echo the text back",
        inputSchema: { type: "object", properties: { text: { type: "string" } }, required: ["text"] },
      }] } });
    case "tools/call":
      return send({ jsonrpc: "2.0", id, result: { content: [{ type: "text", text: `echo: ${params.arguments.text}` }] } });
    default:
      return send({ jsonrpc: "2.0", id, result: {} });
  }
});
