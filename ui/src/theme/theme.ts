/** Light, dark, or follow the operating system. */
export type ThemeChoice = "light" | "dark" | "system";

const STORAGE_KEY = "artifactflow.theme";

export function readThemeChoice(): ThemeChoice {
  const stored = globalThis.localStorage?.getItem(STORAGE_KEY);
  return stored === "light" || stored === "dark" || stored === "system" ? stored : "system";
}

export function systemPrefersDark(): boolean {
  return globalThis.matchMedia?.("(prefers-color-scheme: dark)").matches ?? false;
}

export function resolveTheme(choice: ThemeChoice, prefersDark: boolean): "light" | "dark" {
  if (choice === "system") return prefersDark ? "dark" : "light";
  return choice;
}

/** Set `data-theme` on <html> so the CSS variables switch; stores the choice. */
export function applyTheme(choice: ThemeChoice): "light" | "dark" {
  const resolved = resolveTheme(choice, systemPrefersDark());
  document.documentElement.dataset.theme = resolved;
  document.documentElement.style.colorScheme = resolved;
  globalThis.localStorage?.setItem(STORAGE_KEY, choice);
  return resolved;
}

export function applyStoredTheme(): void {
  applyTheme(readThemeChoice());
}
