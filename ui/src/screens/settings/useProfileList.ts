import { useCallback, useState } from "react";
import type { ModelProfile } from "../../bindings";
import { commands } from "../../bindings";
import { attempt } from "../../ipc/call";

/** Deleting a profile: the list without it goes through `save_profiles`. */
export function useProfileList(profiles: readonly ModelProfile[], reload: () => Promise<void>) {
  const [busy, setBusy] = useState(false);
  const [error, setError] = useState<string | null>(null);

  const remove = useCallback(
    async (index: number) => {
      setBusy(true);
      setError(null);
      const name = profiles[index]?.name ?? "";
      const failed = await attempt(commands.saveProfiles(profiles.filter((_, i) => i !== index)));
      if (failed) setError(`Could not delete ${name}: ${failed.message}`);
      else await reload();
      setBusy(false);
    },
    [profiles, reload],
  );

  return { busy, error, remove };
}
