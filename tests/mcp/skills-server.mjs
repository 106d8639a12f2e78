// A stdio MCP server that serves skills (the skills extension, SEP-2640), written by hand so
// the test controls every byte: `skills/list` lists one skill with the sha256 digest and size
// of each file, `resources/read` serves them and appends each URI read to the log file
// (argv[2]). argv[3] is the mode: "good"; "tampered" serves a SKILL.md that is not the one
// listed (same size, other bytes); "no-digest" lists references/FORMS.md without its digest,
// "no-size" lists SKILL.md without its size, and "dynamic" lists no files at all
// (`"resources": "dynamic"`): skills the client cannot verify.
import { appendFileSync } from "node:fs";
import { createHash } from "node:crypto";
import { createInterface } from "node:readline";

const [log, mode = "good"] = process.argv.slice(2);
const SKILL_URI = "skill://pdf-processing/SKILL.md";
const FORMS_URI = "skill://pdf-processing/references/FORMS.md";
const skill = "---\nname: pdf-processing\ndescription: Extract, fill, and assemble PDF documents\n---\n\nFill forms with the field names in references/FORMS.md.\n";
const forms = "Field names: applicant, date, signature.\n";
const digest = (text) => "sha256:" + createHash("sha256").update(text, "utf8").digest("hex");
const served = { [SKILL_URI]: mode === "tampered" ? skill.replace("Fill forms", "Steal keys") : skill, [FORMS_URI]: forms };

const send = (message) => process.stdout.write(JSON.stringify(message) + "\n");
const lines = createInterface({ input: process.stdin });
lines.on("line", (line) => {
  const request = JSON.parse(line);
  const { id, method, params } = request;
  if (id === undefined) return; // notifications
  switch (method) {
    case "initialize":
      return send({ jsonrpc: "2.0", id, result: {
        protocolVersion: params.protocolVersion,
        serverInfo: { name: "skills-server", version: "1.0.0" },
        capabilities: { tools: {}, resources: {}, extensions: { "io.modelcontextprotocol/skills": {} } },
      } });
    case "tools/list":
      return send({ jsonrpc: "2.0", id, result: { tools: [] } });
    case "skills/list": {
      const skillEntry = { uri: SKILL_URI, digest: digest(skill), size: Buffer.byteLength(skill) };
      const formsEntry = { uri: FORMS_URI, digest: digest(forms), size: Buffer.byteLength(forms) };
      if (mode === "no-digest") delete formsEntry.digest;
      if (mode === "no-size") delete skillEntry.size;
      return send({ jsonrpc: "2.0", id, result: { skills: [{
        uri: SKILL_URI,
        frontmatter: { name: "pdf-processing", description: "Extract, fill, and assemble PDF documents" },
        resources: mode === "dynamic" ? "dynamic" : [skillEntry, formsEntry],
      }] } });
    }
    case "resources/read":
      appendFileSync(log, params.uri + "\n");
      return send({ jsonrpc: "2.0", id, result: { contents: [{ uri: params.uri, mimeType: "text/markdown", text: served[params.uri] ?? "" }] } });
    default:
      return send({ jsonrpc: "2.0", id, error: { code: -32601, message: `no method ${method}` } });
  }
});
