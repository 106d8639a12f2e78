import { startTransition, useCallback, useEffect, useRef, useState } from "react";
import { commands, type ConversationSummary } from "../../bindings";
import { call, errorMessage } from "../../ipc/call";
import { givenFirstPage, mark, PAGE, takeFirstPage } from "./firstPage";

export { PAGE };

/** A failed load: which page failed decides what Retry asks again. */
interface Failure {
  message: string;
  page: "first" | "more";
}

/**
 * The conversation list one page at a time, as the engine pages and searches it
 * (`list_conversation_page`): the first page for `query` at once on every keystroke (a page
 * that arrives for an older query is dropped), more as the list scrolls, and a refresh that
 * keeps the rows already loaded (up to 500).
 *
 * Whether a next page is on its way is state, not only a ref: when a load ends, even one
 * whose page was dropped because a refresh superseded it, the list renders again and asks
 * again if it still sits at its end. A failure stops automatic asking until `retry`.
 */
export function useConversationPages(query: string) {
  // At start, the page the shell gave: the first render already shows the rows.
  const [given] = useState(givenFirstPage);
  const [items, setItems] = useState<ConversationSummary[]>(given?.items ?? []);
  const [total, setTotal] = useState(given?.total ?? 0);
  // The query the rows shown belong to: a keystroke does not blank the list before its page.
  const [loadedFor, setLoadedFor] = useState<string | null>(given ? "" : null);
  const [failure, setFailure] = useState<Failure | null>(null);
  const [loadingMore, setLoadingMore] = useState(false);
  const [version, setVersion] = useState(0);
  const q = query.trim();

  const generation = useRef(0);
  const loaded = useRef(0);
  const lastQuery = useRef<string | null>(null);
  // Guards against a second request in the same tick, before `loadingMore` renders.
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
    const query = q === "" ? null : q;
    // At start, the shell's page or the one main.tsx asked for before React mounted.
    const asked = takeFirstPage(query, keep, 0) ?? commands.listConversationPage(query, keep, 0);
    void call(asked).then(
      (page) => {
        if (!alive || mine !== generation.current) return;
        mark("list-answered");
        // A refresh (a run started or ended) must not hold up typing: it renders as a
        // transition, which a key interrupts, and rows that did not change keep their objects
        // (the list does not render again for a page it already shows).
        startTransition(() => {
          setItems((old) => (samePage(old, page.items) ? old : page.items));
          setTotal(page.total);
          setLoadedFor(q);
          setFailure(null);
        });
      },
      (e: unknown) => {
        if (alive && mine === generation.current)
          setFailure({
            message: `Could not load the conversations: ${errorMessage(e)}`,
            page: "first",
          });
      },
    );
    return () => {
      alive = false;
    };
  }, [q, version]);

  const loadMore = useCallback(async () => {
    if (loading.current || items.length >= total) return;
    loading.current = true;
    setLoadingMore(true);
    const mine = generation.current;
    const offset = items.length;
    try {
      const page = await call(commands.listConversationPage(q === "" ? null : q, PAGE, offset));
      if (mine === generation.current) {
        // Only onto the rows it follows: a refresh in between may have changed how many.
        setItems((old) => (old.length === offset ? [...old, ...page.items] : old));
        setTotal(page.total);
      }
    } catch (e) {
      if (mine === generation.current)
        setFailure({
          message: `Could not load more conversations: ${errorMessage(e)}`,
          page: "more",
        });
    } finally {
      loading.current = false;
      setLoadingMore(false);
    }
  }, [q, items.length, total]);

  const refresh = useCallback(() => setVersion((v) => v + 1), []);

  /** Ask again for what failed: the first page, or the next one. */
  const retry = useCallback(() => {
    const failed = failure?.page;
    setFailure(null);
    if (failed === "first") refresh();
    else void loadMore();
  }, [failure, refresh, loadMore]);

  return {
    items,
    total,
    loadedFor,
    error: failure?.message ?? null,
    loadingMore,
    loadMore,
    retry,
    refresh,
  };
}

/** Whether `next` shows exactly the rows `old` does (same conversations, same fields). */
export function samePage(old: ConversationSummary[], next: ConversationSummary[]): boolean {
  return old.length === next.length && old.every((a, i) => sameValue(a, next[i]));
}

function sameValue(a: unknown, b: unknown): boolean {
  if (Object.is(a, b)) return true;
  if (Array.isArray(a) && Array.isArray(b))
    return a.length === b.length && a.every((x, i) => sameValue(x, b[i]));
  if (a && b && typeof a === "object" && typeof b === "object") {
    const ka = Object.keys(a);
    const x = a as Record<string, unknown>;
    const y = b as Record<string, unknown>;
    return ka.length === Object.keys(b).length && ka.every((k) => sameValue(x[k], y[k]));
  }
  return false;
}
