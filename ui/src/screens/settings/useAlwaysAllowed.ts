import { useCallback, useEffect, useState } from "react";
import { commands, type ConversationSummary } from "../../bindings";
import { attempt, call, errorMessage } from "../../ipc/call";

/** Conversations that always allow some tools, and revoking one tool in one of them. */
export function useAlwaysAllowed() {
  const [conversations, setConversations] = useState<ConversationSummary[] | null>(null);
  const [error, setError] = useState<string | null>(null);
  /** `conversationId\ntool` being revoked. */
  const [busy, setBusy] = useState<string | null>(null);

  useEffect(() => {
    let alive = true;
    void call(commands.listConversations(null)).then(
      (list) => alive && setConversations(list.filter((c) => c.always_allowed.length > 0)),
      (e: unknown) => {
        if (!alive) return;
        setConversations([]);
        setError(errorMessage(e));
      },
    );
    return () => {
      alive = false;
    };
  }, []);

  const revoke = useCallback(async (conversationId: string, tool: string) => {
    setBusy(`${conversationId}\n${tool}`);
    setError(null);
    const failed = await attempt(commands.revokeAlwaysAllowed(conversationId, tool));
    setBusy(null);
    if (failed) {
      setError(`Could not revoke ${tool}: ${failed.message}`);
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
