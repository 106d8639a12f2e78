import { useCallback, useEffect, useState } from "react";
import { commands, type SettingsView } from "../bindings";
import { call } from "../ipc/call";

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

export function useFirstRun() {
  const [show, setShow] = useState(false);
  useEffect(() => {
    if (globalThis.localStorage?.getItem(SKIPPED) === "1") return;
    let alive = true;
    call(commands.getSettings())
      .then((view) => alive && needsSetup(view) && setShow(true))
      // Without settings there is nothing to set up from; the Settings screen shows why.
      .catch(() => {});
    return () => {
      alive = false;
    };
  }, []);
  const done = useCallback(() => {
    globalThis.localStorage?.setItem(SKIPPED, "1");
    setShow(false);
  }, []);
  return { show, done };
}
