import { useCallback, useEffect, useState } from "react";
import { commands, type PermissionRulesView, type RuleSpec } from "../../bindings";
import { attempt, call, errorMessage } from "../../ipc/call";
import { useStatusChanges } from "../../ipc/useEngineEvents";

/** Every permission rule (global and per agent), refreshed when the config folder reloads, and
 * saving the global ones. */
export function usePermissionRules() {
  const [view, setView] = useState<PermissionRulesView | null>(null);
  const [error, setError] = useState<string | null>(null);
  const [saves, setSaves] = useState(0);
  const statusChanges = useStatusChanges();

  useEffect(() => {
    let alive = true;
    const load = () =>
      void call(commands.listPermissionRules()).then(
        (v) => {
          if (!alive) return;
          setView(v);
          setError(null);
        },
        (e: unknown) => alive && setError(errorMessage(e)),
      );
    load();
    const off = statusChanges.subscribe(load);
    return () => {
      alive = false;
      off();
    };
  }, [statusChanges, saves]);

  /** Save the global rules; returns the error message when they are refused. */
  const save = useCallback(async (rules: RuleSpec[]): Promise<string | null> => {
    const failed = await attempt(commands.saveGlobalPermissionRules(rules));
    if (failed) return failed.message;
    setSaves((n) => n + 1);
    return null;
  }, []);

  return { view, error, save };
}
