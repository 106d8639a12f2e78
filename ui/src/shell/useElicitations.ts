import { useCallback, useState } from "react";
import {
  commands,
  type CallOrigin,
  type ElicitationForm,
  type ElicitationReply,
} from "../bindings";
import { call } from "../ipc/call";
import { useEngineEvents } from "../ipc/useEngineEvents";

/** A form (or page to open) an MCP server asks for during a call. */
export interface PendingElicitation {
  requestId: string;
  /** The server asking (its name in mcp.json). */
  server: string;
  message: string;
  /** The form with its defaults; null for a URL request. */
  form: ElicitationForm | null;
  /** The page of a URL request. */
  url: string | null;
  /** The call it came from, when the engine knows it. */
  origin: CallOrigin | null;
  deadlineMs: number;
}

/** Pending elicitation requests, oldest first, and the answer action. An answer the engine
 * refuses (values that do not fit the form) throws its error and leaves the request queued. */
export function useElicitations() {
  const [queue, setQueue] = useState<PendingElicitation[]>([]);
  useEngineEvents((event) => {
    if (event.type === "elicitation_request") {
      setQueue((q) => [
        ...q,
        {
          requestId: event.request_id,
          server: event.server,
          message: event.message,
          form: event.form,
          url: event.url,
          origin: event.origin,
          deadlineMs: event.deadline_ms,
        },
      ]);
    } else if (event.type === "elicitation_resolved") {
      setQueue((q) => q.filter((p) => p.requestId !== event.request_id));
    }
  });

  const answer = useCallback(async (requestId: string, reply: ElicitationReply) => {
    await call(commands.answerElicitation(requestId, reply));
    setQueue((q) => q.filter((p) => p.requestId !== requestId));
  }, []);

  return { queue, answer };
}
