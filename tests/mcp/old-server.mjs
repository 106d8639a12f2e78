// A stdio MCP server of an older generation, written by hand: it speaks only 2025-06-18 (it
// answers `initialize` with that version whatever the client asks for) and, like some servers
// in the wild, answers every request it does not know (`server/discover` among them) with an
// empty result instead of an error. One tool: `echo`. Each method received is appended to the
// log file argv[2], one per line. With argv[3] = "late" it is slow to start (see below).
import { appendFileSync } from "node:fs";
import { createInterface } from "node:readline";

const [log, mode] = process.argv.slice(2);
const send = (message) => process.stdout.write(JSON.stringify(message) + "\n");
// "late": slow to start (as `npx -y` fetching a package): nothing is answered until the
// handshake arrives, then the early requests are answered first, in order.
let held = mode === "late" ? [] : null;
createInterface({ input: process.stdin }).on("line", (line) => {
  const message = JSON.parse(line);
  if (log) appendFileSync(log, `${message.method}\n`);
  if (held) {
    held.push(message);
    if (message.method !== "initialize") return;
    const early = held;
    held = null;
    return early.forEach(answer);
  }
  answer(message);
});

function answer({ id, method, params }) {
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
}
