import { useCallback, useEffect, useRef, useState } from "react";
import { commands, type ArtifactSource, type ArtifactSummary, type ListSort } from "../../bindings";
import { call, errorMessage } from "../../ipc/call";
import { useEngineEvents } from "../../ipc/useEngineEvents";

const PAGE = 100;

export interface LibraryFilter {
  text: string;
  contentType: string;
  source: ArtifactSource | "";
  /** A conversation id, or "" for all. */
  conversationId: string;
  /** First day (YYYY-MM-DD, local), or "". */
  from: string;
  /** Last day, inclusive (YYYY-MM-DD, local), or "". */
  to: string;
  sort: ListSort;
}

export const EMPTY_FILTER: LibraryFilter = {
  text: "",
  contentType: "",
  source: "",
  conversationId: "",
  from: "",
  to: "",
  sort: "relevance",
};

/** The instant the local day `day` (YYYY-MM-DD) starts, as the database stores instants. */
export function localDayStart(day: string): string {
  const [y, m, d] = day.split("-").map(Number);
  return new Date(y ?? 1970, (m ?? 1) - 1, d ?? 1).toISOString();
}

/** The day after `day` (YYYY-MM-DD), so an inclusive last day becomes an exclusive bound. */
export function nextDay(day: string): string {
  const d = new Date(`${day}T00:00:00Z`);
  d.setUTCDate(d.getUTCDate() + 1);
  return d.toISOString().slice(0, 10);
}

/** One page at a time of every artifact across conversations, searched and filtered. */
export function useLibrary() {
  const [filter, setFilter] = useState<LibraryFilter>(EMPTY_FILTER);
  const loading = useRef(false);
  const [items, setItems] = useState<ArtifactSummary[]>([]);
  const [total, setTotal] = useState(0);
  const [error, setError] = useState<string | null>(null);
  const [version, setVersion] = useState(0);

  const fetchPage = useCallback(
    (offset: number, limit: number = PAGE) =>
      commands.listArtifacts(
        {
          query: filter.text.trim() || null,
          conversation_id: filter.conversationId || null,
          content_type: filter.contentType || null,
          source: filter.source || null,
          // The user's days are local days.
          updated_from: filter.from ? localDayStart(filter.from) : null,
          updated_before: filter.to ? localDayStart(nextDay(filter.to)) : null,
          sort: filter.sort,
        },
        limit,
        offset,
      ),
    [filter],
  );

  // Bumped on every new listing: a page that arrives for an older one is dropped.
  const generation = useRef(0);
  const loaded = useRef(0);
  const lastFetch = useRef<typeof fetchPage | null>(null);
  useEffect(() => {
    loaded.current = items.length;
  }, [items.length]);

  useEffect(() => {
    let alive = true;
    const mine = ++generation.current;
    // A refresh (the same filter) keeps the rows already loaded, up to 500.
    const same = lastFetch.current === fetchPage;
    lastFetch.current = fetchPage;
    const keep = same ? Math.min(500, Math.max(PAGE, loaded.current)) : PAGE;
    void call(fetchPage(0, keep)).then(
      (page) => {
        if (mine !== generation.current || !alive) return;
        setItems(page.items);
        setTotal(page.total);
        setError(null);
      },
      (e: unknown) => {
        if (mine !== generation.current || !alive) return;
        setError(errorMessage(e));
      },
    );
    return () => {
      alive = false;
    };
  }, [fetchPage, version]);

  const loadMore = useCallback(async () => {
    if (loading.current) return;
    loading.current = true;
    const mine = generation.current;
    try {
      const page = await call(fetchPage(items.length));
      if (mine === generation.current) setItems((old) => [...old, ...page.items]);
    } catch (e) {
      if (mine === generation.current) setError(errorMessage(e));
    } finally {
      loading.current = false;
    }
  }, [fetchPage, items.length]);

  const refresh = useCallback(() => setVersion((v) => v + 1), []);
  // A run writing many artifacts refreshes the list at most every 300 ms.
  const pending = useRef<number | null>(null);
  useEffect(
    () => () => {
      if (pending.current !== null) window.clearTimeout(pending.current);
    },
    [],
  );
  useEngineEvents((e) => {
    if (e.type !== "artifact_snapshot" && e.type !== "run_ended") return;
    if (pending.current !== null) return;
    pending.current = window.setTimeout(() => {
      pending.current = null;
      refresh();
    }, 300);
  });

  return { filter, setFilter, items, total, error, loadMore, refresh };
}
