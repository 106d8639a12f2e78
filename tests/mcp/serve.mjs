// How the test servers built on the SDK v2 are started: `node SERVER.mjs` serves stdio,
// `node SERVER.mjs http PORT_FILE` serves HTTP on 127.0.0.1 at a free port, written to PORT_FILE.
import { writeFileSync } from "node:fs";
import { createServer } from "node:http";
import { Readable } from "node:stream";
import { createMcpHandler } from "@modelcontextprotocol/server";
import { serveStdio } from "@modelcontextprotocol/server/stdio";

/// Serves `factory`'s server over the transport the command line names. `onPost(body, headers)`
/// sees each HTTP request's body (a Buffer, maybe empty) before the server does.
export function serve(factory, { onPost } = {}) {
  const [mode, portFile] = process.argv.slice(2);
  if (mode !== "http") {
    serveStdio(factory);
    return;
  }
  const handler = createMcpHandler(factory);
  const http = createServer(async (req, res) => {
    const chunks = [];
    for await (const chunk of req) chunks.push(chunk);
    const body = Buffer.concat(chunks);
    onPost?.(body, req.headers);
    const request = new Request(`http://${req.headers.host}${req.url}`, {
      method: req.method,
      headers: req.headers,
      body: body.length ? body : undefined,
    });
    const response = await handler.fetch(request);
    res.writeHead(response.status, Object.fromEntries(response.headers));
    if (response.body) Readable.fromWeb(response.body).pipe(res);
    else res.end();
  });
  http.listen(0, "127.0.0.1", () => writeFileSync(portFile, String(http.address().port)));
}
