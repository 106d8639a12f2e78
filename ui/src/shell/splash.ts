/**
 * The starting splash: `#splash` in index.html covers the window from its first paint, says
 * "Starting ArtifactFlow…" (a busy status) and takes every click, until the app is ready to be
 * used. Before that, input had nowhere useful to go: the page was empty until the script ran,
 * and on a fresh machine the first-run setup replaced the chat a few seconds after it showed,
 * taking a click meant for the chat with it. The shell calls {@link hideSplash} once its first
 * screen is the one that stays (see `useFirstRun`).
 */
import { mark } from "../screens/chat/firstPage";

/** The splash element's id in index.html. */
export const SPLASH_ID = "splash";

/** Remove the splash (once; later calls do nothing). */
export function hideSplash(): void {
  const splash = document.getElementById(SPLASH_ID);
  if (!splash) return;
  splash.remove();
  mark("ready", true);
}
