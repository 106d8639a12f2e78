import { useCallback, useEffect, useState } from "react";
import { commands, type Answer } from "../bindings";
import { useEngineEvents } from "../ipc/useEngineEvents";
import type { PendingPermission } from "../screens/chat/timeline";

/** Pending permission requests, oldest first, and the answer action. */
export function usePermissions() {
  const [queue, setQueue] = useState<PendingPermission[]>([]);
  const [timeoutSecs, setTimeoutSecs] = useState(120);

  useEffect(() => {
    void commands.getSettings().then((res) => {
      if (res.status === "ok") setTimeoutSecs(res.data.settings.permission_timeout_secs);
    });
  }, []);

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
          receivedAt: Date.now(),
        },
      ]);
    } else if (event.type === "permission_resolved") {
      setQueue((q) => q.filter((p) => p.requestId !== event.request_id));
    } else if (event.type === "config_reloaded") {
      void commands.getSettings().then((res) => {
        if (res.status === "ok") setTimeoutSecs(res.data.settings.permission_timeout_secs);
      });
    }
  });

  const answer = useCallback(async (requestId: string, a: Answer) => {
    setQueue((q) => q.filter((p) => p.requestId !== requestId));
    await commands.answerPermission(requestId, a);
  }, []);

  return { queue, timeoutSecs, answer };
}
