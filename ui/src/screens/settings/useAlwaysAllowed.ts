import { useCallback, useEffect, useState } from "react";
import { commands, type Grant } from "../../bindings";
import { attempt, call, errorMessage } from "../../ipc/call";

/** Every conversation's permission grants ("always allow" answers), and deleting one. */
export function useAlwaysAllowed() {
  const [grants, setGrants] = useState<Grant[] | null>(null);
  const [error, setError] = useState<string | null>(null);
  /** The id of the grant being deleted. */
  const [busy, setBusy] = useState<string | null>(null);

  useEffect(() => {
    let alive = true;
    void call(commands.listPermissionGrants()).then(
      (list) => alive && setGrants(list),
      (e: unknown) => {
        if (!alive) return;
        setGrants([]);
        setError(errorMessage(e));
      },
    );
    return () => {
      alive = false;
    };
  }, []);

  const remove = useCallback(async (grant: Grant) => {
    setBusy(grant.id);
    setError(null);
    const failed = await attempt(commands.deletePermissionGrant(grant.id));
    setBusy(null);
    if (failed) {
      setError(`Could not delete the grant for ${grant.tool}: ${failed.message}`);
      return;
    }
    setGrants((list) => list?.filter((g) => g.id !== grant.id) ?? null);
  }, []);

  return { grants, error, remove, busy, anyBusy: busy !== null };
}
