// Runs an MCP stdio server and appends every line the client sends it to a log file, so a
// test can see what reached the server (e.g. notifications/cancelled).
// Usage: node tee.mjs LOGFILE COMMAND ARGS...
import { spawn } from "node:child_process";
import { appendFileSync } from "node:fs";

const [log, command, ...args] = process.argv.slice(2);
const child = spawn(command, args, { stdio: ["pipe", "inherit", "inherit"] });
process.stdin.on("data", (chunk) => {
  appendFileSync(log, chunk);
  child.stdin.write(chunk);
});
process.stdin.on("end", () => child.stdin.end());
child.on("exit", (code) => process.exit(code ?? 1));
