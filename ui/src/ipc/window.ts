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

/**
 * While `shouldHold()` is true, closing the window is held and `onHeld(close)` is called
 * instead; `close()` then closes it for real. Returns the unsubscribe function. Outside the
 * desktop app (tests, browser) nothing is held.
 */
export function holdWindowClose(onHeld: (close: () => void) => void): () => void {
  let unlisten: (() => void) | null = null;
  let stopped = false;
  try {
    const win = getCurrentWindow();
    void win
      .onCloseRequested((event) => {
        event.preventDefault();
        onHeld(() => void win.destroy().catch(() => undefined));
      })
      .then((off) => {
        if (stopped) off();
        else unlisten = off;
      })
      .catch(() => undefined);
  } catch {
    // Not running inside a Tauri window.
  }
  return () => {
    stopped = true;
    unlisten?.();
  };
}
