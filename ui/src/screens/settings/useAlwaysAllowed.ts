import { useCallback, useEffect, useState } from "react";
import type { ConversationSummary } from "../../bindings";
import { settingsIpc } from "./settingsIpc";

/** Conversations that always allow some tools, and revoking one tool in one of them. */
export function useAlwaysAllowed() {
  const [conversations, setConversations] = useState<ConversationSummary[] | null>(null);
  const [error, setError] = useState<string | null>(null);
  /** `conversationId\ntool` being revoked. */
  const [busy, setBusy] = useState<string | null>(null);

  useEffect(() => {
    let alive = true;
    void settingsIpc.listConversations().then((res) => {
      if (!alive) return;
      if (res.status === "ok") {
        setConversations(res.data.filter((c) => c.always_allowed.length > 0));
      } else {
        setConversations([]);
        setError(res.error.message);
      }
    });
    return () => {
      alive = false;
    };
  }, []);

  const revoke = useCallback(async (conversationId: string, tool: string) => {
    setBusy(`${conversationId}\n${tool}`);
    setError(null);
    const res = await settingsIpc.revokeAlwaysAllowed(conversationId, tool);
    setBusy(null);
    if (res.status === "error") {
      setError(`Could not revoke ${tool}: ${res.error.message}`);
      return;
    }
    setConversations(
      (list) =>
        list
          ?.map((c) =>
            c.id === conversationId
              ? { ...c, always_allowed: c.always_allowed.filter((t) => t !== tool) }
              : c,
          )
          .filter((c) => c.always_allowed.length > 0) ?? null,
    );
  }, []);

  const isBusy = useCallback(
    (conversationId: string, tool: string) => busy === `${conversationId}\n${tool}`,
    [busy],
  );

  return { conversations, error, revoke, isBusy, anyBusy: busy !== null };
}
