import { EMPTY_FORM, serverJson } from "./serverForm";

describe("serverJson", () => {
  it("writes a local server with its arguments a line each and its environment", () => {
    const json = serverJson({
      ...EMPTY_FORM,
      name: " files ",
      command: "npx",
      args: "-y\n@modelcontextprotocol/server-filesystem\n\n/home/u/My Documents\n",
      env: "API_KEY={{FILES_KEY}}\nMODE=a=b",
      url: "https://ignored.example.com",
    });
    expect(JSON.parse(json)).toEqual({
      mcpServers: {
        files: {
          command: "npx",
          args: ["-y", "@modelcontextprotocol/server-filesystem", "/home/u/My Documents"],
          env: { API_KEY: "{{FILES_KEY}}", MODE: "a=b" },
        },
      },
    });
  });

  it("writes a remote server with its headers, leaving out what is empty", () => {
    const json = serverJson({
      ...EMPTY_FORM,
      name: "remote",
      kind: "http",
      command: "ignored",
      url: " https://mcp.example.com/mcp ",
      headers: "Authorization: Bearer {{TOKEN}}\nX-Trace: a:b",
    });
    expect(JSON.parse(json)).toEqual({
      mcpServers: {
        remote: {
          url: "https://mcp.example.com/mcp",
          headers: { Authorization: "Bearer {{TOKEN}}", "X-Trace": "a:b" },
        },
      },
    });
    expect(JSON.parse(serverJson({ ...EMPTY_FORM, name: "bare", command: "uvx" }))).toEqual({
      mcpServers: { bare: { command: "uvx" } },
    });
  });
});
