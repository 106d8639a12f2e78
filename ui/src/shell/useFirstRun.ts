import { useCallback, useState } from "react";
import type { SettingsView } from "../bindings";
import { useSharedSettings } from "../ipc/shared";

const SKIPPED = "artifactflow.setupDone";

/**
 * Whether to show the first-run setup: the `default` profile (the one the bundled agents use)
 * is missing or its API key is not set anywhere, and the user has not finished or skipped the
 * setup before.
 */
export function needsSetup(view: SettingsView): boolean {
  const profile = view.profiles.find((p) => p.name === "default");
  if (!profile) return true;
  const key = profile.api_key?.match(
    /^\s*(?:\{\{|<<)\s*([A-Za-z_][A-Za-z0-9_]*)\s*(?:\}\}|>>)\s*$/,
  )?.[1];
  return key !== undefined && view.missing_secrets.includes(key);
}

/** Whether the user finished or skipped the setup before. */
const skipped = () => globalThis.localStorage?.getItem(SKIPPED) === "1";

/**
 * Whether to show the first-run setup (`show`), and whether that is known yet (`decided`):
 * until the settings answer, the chat shown may still be replaced by the setup.
 */
export function useFirstRun() {
  const settings = useSharedSettings();
  // Decided once, on the first answer (null until then): a profile added later does not bring
  // the setup back. Without settings there is nothing to set up from; the Settings screen
  // shows why.
  const [verdict, setVerdict] = useState<boolean | null>(() => (skipped() ? false : null));
  if (verdict === null && !settings.loading)
    setVerdict(settings.value !== null && needsSetup(settings.value));
  const done = useCallback(() => {
    globalThis.localStorage?.setItem(SKIPPED, "1");
    setVerdict(false);
  }, []);
  return { show: verdict === true, decided: verdict !== null, done };
}
