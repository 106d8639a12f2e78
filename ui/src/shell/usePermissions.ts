import { useCallback, useState } from "react";
import { commands, type Answer, type GrantChoice } from "../bindings";
import { useEngineEvents } from "../ipc/useEngineEvents";
import type { PendingPermission } from "../screens/chat/timeline";

/** Pending permission requests, oldest first, and the answer action. */
export function usePermissions() {
  const [queue, setQueue] = useState<PendingPermission[]>([]);
  useEngineEvents((event) => {
    if (event.type === "permission_request") {
      setQueue((q) => [
        ...q,
        {
          requestId: event.request_id,
          conversationId: event.conversation_id,
          conversationTitle: event.conversation_title,
          agentChain: event.agent_chain,
          request: event.request,
          // The engine's deadline: no settings (and so no keyring) read to learn the timeout.
          deadlineMs: event.deadline_ms,
        },
      ]);
    } else if (event.type === "permission_resolved") {
      setQueue((q) => q.filter((p) => p.requestId !== event.request_id));
    }
  });

  /** Answer; a refused "calls like this" rule (invalid) keeps the request and returns why. */
  const answer = useCallback(
    async (requestId: string, a: Answer, grant?: GrantChoice | null): Promise<string | null> => {
      if (grant?.kind === "rule") {
        const res = await commands.answerPermission(requestId, a, grant);
        if (res.status === "error") return res.error.message;
      } else {
        setQueue((q) => q.filter((p) => p.requestId !== requestId));
        await commands.answerPermission(requestId, a, grant ?? null);
        return null;
      }
      setQueue((q) => q.filter((p) => p.requestId !== requestId));
      return null;
    },
    [],
  );

  return { queue, answer };
}
