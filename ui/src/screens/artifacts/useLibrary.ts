import { useCallback, useEffect, useState } from "react";
import { commands, type ArtifactSource, type ArtifactSummary } from "../../bindings";
import { useEngineEvents } from "../../ipc/useEngineEvents";

const PAGE = 100;

export interface LibraryFilter {
  text: string;
  contentType: string;
  source: ArtifactSource | "";
}

/** One page at a time of every artifact across conversations, searched and filtered. */
export function useLibrary() {
  const [filter, setFilter] = useState<LibraryFilter>({ text: "", contentType: "", source: "" });
  const [items, setItems] = useState<ArtifactSummary[]>([]);
  const [total, setTotal] = useState(0);
  const [error, setError] = useState<string | null>(null);
  const [version, setVersion] = useState(0);

  const fetchPage = useCallback(
    (offset: number) =>
      commands.listArtifacts(
        {
          query: filter.text.trim() || null,
          conversation_id: null,
          content_type: filter.contentType || null,
          source: filter.source || null,
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
    const res = await fetchPage(items.length);
    if (res.status === "ok") setItems((old) => [...old, ...res.data.items]);
  }, [fetchPage, items.length]);

  const refresh = useCallback(() => setVersion((v) => v + 1), []);
  useEngineEvents((e) => {
    if (e.type === "artifact_snapshot" || e.type === "run_ended") refresh();
  });

  return { filter, setFilter, items, total, error, loadMore, refresh };
}
