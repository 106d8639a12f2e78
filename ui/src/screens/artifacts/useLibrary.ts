import { useCallback, useEffect, useRef, useState } from "react";
import { commands, type ArtifactSource, type ArtifactSummary, type ListSort } from "../../bindings";
import { useEngineEvents } from "../../ipc/useEngineEvents";

const PAGE = 100;

export interface LibraryFilter {
  text: string;
  contentType: string;
  source: ArtifactSource | "";
  /** A conversation id, or "" for all. */
  conversationId: string;
  /** First day (YYYY-MM-DD, UTC), or "". */
  from: string;
  /** Last day, inclusive (YYYY-MM-DD, UTC), or "". */
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
    (offset: number) =>
      commands.listArtifacts(
        {
          query: filter.text.trim() || null,
          conversation_id: filter.conversationId || null,
          content_type: filter.contentType || null,
          source: filter.source || null,
          updated_from: filter.from || null,
          updated_before: filter.to ? nextDay(filter.to) : null,
          sort: filter.sort,
        },
        PAGE,
        offset,
      ),
    [filter],
  );

  useEffect(() => {
    let alive = true;
    void fetchPage(0).then((res) => {
      if (!alive) return;
      if (res.status === "ok") {
        setItems(res.data.items);
        setTotal(res.data.total);
        setError(null);
      } else setError(res.error.message);
    });
    return () => {
      alive = false;
    };
  }, [fetchPage, version]);

  const loadMore = useCallback(async () => {
    if (loading.current) return;
    loading.current = true;
    const res = await fetchPage(items.length);
    loading.current = false;
    if (res.status === "ok") setItems((old) => [...old, ...res.data.items]);
  }, [fetchPage, items.length]);

  const refresh = useCallback(() => setVersion((v) => v + 1), []);
  useEngineEvents((e) => {
    if (e.type === "artifact_snapshot" || e.type === "run_ended") refresh();
  });

  return { filter, setFilter, items, total, error, loadMore, refresh };
}
