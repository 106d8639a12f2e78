import { getCurrentWindow } from "@tauri-apps/api/window";
import { holdClose } from "./pushed";

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
 * instead; `close()` then closes it for real. Returns the unsubscribe function.
 */
export function holdWindowClose(onHeld: (close: () => void) => void): () => void {
  return holdClose(() =>
    onHeld(() => {
      try {
        void getCurrentWindow()
          .destroy()
          .catch(() => undefined);
      } catch {
        // Not running inside a Tauri window.
      }
    }),
  );
}
