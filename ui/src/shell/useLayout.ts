import { useCallback, useEffect, useState } from "react";

/** Below this window width the sidebar and the conversation list start collapsed, so the chat
 * keeps a usable width (at the 720 px minimum it was about 200 px wide). */
export const NARROW_BELOW = 960;

const KEY = { wide: "artifactflow.collapsed.wide", narrow: "artifactflow.collapsed.narrow" };

function isNarrow(): boolean {
  return typeof window !== "undefined" && window.innerWidth < NARROW_BELOW;
}

function stored(mode: "wide" | "narrow"): boolean {
  const value = globalThis.localStorage?.getItem(KEY[mode]);
  return value === null || value === undefined ? mode === "narrow" : value === "1";
}

/**
 * Whether the sidebar and the conversation list are collapsed. Wide and narrow windows each
 * remember their own choice across restarts (localStorage): collapsed by default below
 * [`NARROW_BELOW`], expanded above, so making the window small collapses them by itself and
 * making it large again brings them back.
 */
export function useCollapsed(): [boolean, () => void] {
  const [narrow, setNarrow] = useState(isNarrow);
  const [choice, setChoice] = useState(() => ({ wide: stored("wide"), narrow: stored("narrow") }));
  useEffect(() => {
    const onResize = () => setNarrow(isNarrow());
    window.addEventListener("resize", onResize);
    return () => window.removeEventListener("resize", onResize);
  }, []);
  const mode = narrow ? "narrow" : "wide";
  const toggle = useCallback(() => {
    setChoice((c) => {
      const next = { ...c, [mode]: !c[mode] };
      globalThis.localStorage?.setItem(KEY[mode], next[mode] ? "1" : "0");
      return next;
    });
  }, [mode]);
  return [choice[mode], toggle];
}
