import { useCallback, useEffect, useRef, useState } from "react";
import { commands, type ConversationSummary } from "../../bindings";
import { call, errorMessage } from "../../ipc/call";

/** Rows asked for at a time: a screen and a half of the list. */
export const PAGE = 60;

/**
 * The conversation list one page at a time, as the engine pages and searches it
 * (`list_conversation_page`): the first page for `query` at once on every keystroke (a page
 * that arrives for an older query is dropped), more as the list scrolls, and a refresh that
 * keeps the rows already loaded (up to 500).
 */
export function useConversationPages(query: string) {
  const [items, setItems] = useState<ConversationSummary[]>([]);
  const [total, setTotal] = useState(0);
  // The query the rows shown belong to: a keystroke does not blank the list before its page.
  const [loadedFor, setLoadedFor] = useState<string | null>(null);
  const [error, setError] = useState<string | null>(null);
  const [version, setVersion] = useState(0);
  const q = query.trim();

  const generation = useRef(0);
  const loaded = useRef(0);
  const lastQuery = useRef<string | null>(null);
  const loading = useRef(false);
  useEffect(() => {
    loaded.current = items.length;
  }, [items.length]);

  useEffect(() => {
    let alive = true;
    const mine = ++generation.current;
    const same = lastQuery.current === q;
    lastQuery.current = q;
    const keep = same ? Math.min(500, Math.max(PAGE, loaded.current)) : PAGE;
    void call(commands.listConversationPage(q === "" ? null : q, keep, 0)).then(
      (page) => {
        if (!alive || mine !== generation.current) return;
        setItems(page.items);
        setTotal(page.total);
        setLoadedFor(q);
        setError(null);
      },
      (e: unknown) => {
        if (alive && mine === generation.current) setError(errorMessage(e));
      },
    );
    return () => {
      alive = false;
    };
  }, [q, version]);

  const loadMore = useCallback(async () => {
    if (loading.current || items.length >= total) return;
    loading.current = true;
    const mine = generation.current;
    try {
      const page = await call(
        commands.listConversationPage(q === "" ? null : q, PAGE, items.length),
      );
      if (mine === generation.current) {
        setItems((old) => [...old, ...page.items]);
        setTotal(page.total);
      }
    } catch (e) {
      if (mine === generation.current) setError(errorMessage(e));
    } finally {
      loading.current = false;
    }
  }, [q, items.length, total]);

  const refresh = useCallback(() => setVersion((v) => v + 1), []);
  return { items, total, loadedFor, error, loadMore, refresh };
}
