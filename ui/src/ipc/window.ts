import { getCurrentWindow } from "@tauri-apps/api/window";

/** Match the native title bar to the theme; a no-op outside the desktop app (tests, browser). */
export function setNativeTheme(theme: "light" | "dark" | null): void {
  try {
    getCurrentWindow()
      .setTheme(theme)
      .catch(() => undefined);
  } catch {
    // Not running inside a Tauri window.
  }
}
