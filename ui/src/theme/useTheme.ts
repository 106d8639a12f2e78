import { useCallback, useEffect, useState } from "react";
import { applyTheme, readThemeChoice, type ThemeChoice } from "./theme";
import { setNativeTheme } from "../ipc/window";

/** The theme choice, applied to the document and the native window, following OS changes. */
export function useTheme(): [ThemeChoice, (choice: ThemeChoice) => void] {
  const [choice, setChoice] = useState<ThemeChoice>(readThemeChoice);

  useEffect(() => {
    applyTheme(choice);
    setNativeTheme(choice === "system" ? null : choice);
    if (choice !== "system") return;
    const query = globalThis.matchMedia?.("(prefers-color-scheme: dark)");
    if (!query) return;
    const onChange = () => applyTheme("system");
    query.addEventListener("change", onChange);
    return () => query.removeEventListener("change", onChange);
  }, [choice]);

  const set = useCallback((next: ThemeChoice) => setChoice(next), []);
  return [choice, set];
}
