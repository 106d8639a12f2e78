import { createContext, useContext, useState, type ReactNode } from "react";
import type { ServerStatus } from "../../../bindings";
import { useEngineEvents } from "../../../ipc/useEngineEvents";

/** One status change of a server, as the engine announced it. */
export type StatusChange = { at: Date; status: ServerStatus };

/** How many status changes each server keeps. */
export const HISTORY = 8;

type History = Record<string, StatusChange[]>;

const StatusHistoryContext = createContext<History | null>(null);

/**
 * Each MCP server's recent status changes, newest first, recorded for the whole app from the
 * engine's events, whichever screen is shown (like the chat store): a crash and its restart
 * while the Tools page is closed are still listed when it is opened again.
 */
export function McpStatusHistoryProvider({ children }: { children: ReactNode }) {
  const [history, setHistory] = useState<History>({});
  useEngineEvents((event) => {
    if (event.type !== "mcp_server_status") return;
    const change = { at: new Date(), status: event.status };
    setHistory((h) => ({
      ...h,
      [event.server]: [change, ...(h[event.server] ?? [])].slice(0, HISTORY),
    }));
  });
  return <StatusHistoryContext.Provider value={history}>{children}</StatusHistoryContext.Provider>;
}

/** The recorded status changes of every server (see [`McpStatusHistoryProvider`]). */
export function useMcpStatusHistory(): History {
  const history = useContext(StatusHistoryContext);
  if (history === null)
    throw new Error("useMcpStatusHistory needs an McpStatusHistoryProvider above it");
  return history;
}
