import { useCallback, useState } from "react";
import { parseTimeout } from "./permissionTimeout";
import { commands } from "../../bindings";
import { attempt } from "../../ipc/call";

/** Saving the permission timeout: checked against the bounds, then `save_permission_timeout`. */
export function usePermissionTimeout(reload: () => Promise<void>) {
  const [saving, setSaving] = useState(false);
  const [error, setError] = useState<string | null>(null);
  const [saved, setSaved] = useState(false);

  const save = useCallback(
    async (text: string): Promise<boolean> => {
      setSaved(false);
      const parsed = parseTimeout(text);
      if (!parsed.ok) {
        setError(parsed.error);
        return false;
      }
      setSaving(true);
      setError(null);
      const failed = await attempt(commands.savePermissionTimeout(parsed.seconds));
      setSaving(false);
      if (failed) {
        setError(failed.message);
        return false;
      }
      setSaved(true);
      await reload();
      return true;
    },
    [reload],
  );

  const clear = useCallback(() => {
    setSaved(false);
    setError(null);
  }, []);

  return { saving, error, saved, save, clear };
}
