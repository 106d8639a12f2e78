import { clearMocks, mockIPC } from "@tauri-apps/api/mocks";
import { afterEach, describe, expect, it } from "vitest";
import { commands } from "../bindings";
import { IpcError, attempt, call } from "./call";

afterEach(() => clearMocks());

describe("call", () => {
  it("returns the value of a command that succeeded", async () => {
    mockIPC((cmd) => (cmd === "list_conversations" ? [{ id: "c1" }] : null));
    await expect(call(commands.listConversations(null))).resolves.toEqual([{ id: "c1" }]);
  });

  it("throws the shell's error with its code and message", async () => {
    mockIPC(() => {
      throw { code: "already_running", message: "“Notes” is still running: stop it first" };
    });
    const err = await call(commands.startRun("c1", "researcher", "hi")).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(IpcError);
    expect(err).toMatchObject({
      code: "already_running",
      message: "“Notes” is still running: stop it first",
    });
  });

  it("turns a bridge that rejects into a transport error", async () => {
    mockIPC(() => {
      throw new Error("the IPC channel closed");
    });
    const err = await call(commands.getStatus()).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(IpcError);
    expect(err).toMatchObject({ code: "transport" });
    expect((err as IpcError).message).toContain("the IPC channel closed");
  });

  it("turns a refusal by Tauri itself (a bare string) into a transport error with its text", async () => {
    mockIPC(() => {
      throw "mcp_servers not allowed. Command not found";
    });
    const err = await call(commands.mcpServers()).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(IpcError);
    expect(err).toMatchObject({ code: "transport" });
    expect((err as IpcError).message).toContain("mcp_servers not allowed");
  });

  it("attempt gives null on success and the error otherwise", async () => {
    mockIPC((cmd) => {
      if (cmd === "delete_secret") throw { code: "keyring", message: "the system keyring failed" };
      return null;
    });
    await expect(attempt(commands.cancelToolTest())).resolves.toBeNull();
    await expect(attempt(commands.deleteSecret("K"))).resolves.toMatchObject({ code: "keyring" });
  });
});
