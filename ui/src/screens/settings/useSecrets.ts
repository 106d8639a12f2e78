import { useCallback, useState } from "react";
import { SECRET_NAME_RULE, isValidSecretName } from "./secretNames";
import { commands } from "../../bindings";
import { attempt } from "../../ipc/call";

export interface SecretRow {
  name: string;
  /** In the keyring. */
  stored: boolean;
  /** Referenced by a profile, tool or setting but not found anywhere. */
  missing: boolean;
}

/** Stored secrets and missing ones, sorted by name (missing first). */
export function secretRows(stored: readonly string[], missing: readonly string[]): SecretRow[] {
  const names = new Set([...stored, ...missing]);
  return [...names]
    .map((name) => ({ name, stored: stored.includes(name), missing: missing.includes(name) }))
    .sort((a, b) => Number(b.missing) - Number(a.missing) || a.name.localeCompare(b.name));
}

/** Setting, replacing and deleting keyring secrets; values go one way only. */
export function useSecrets(reload: () => Promise<void>) {
  const [busy, setBusy] = useState<string | null>(null);
  const [error, setError] = useState<string | null>(null);

  /** Store `value` under `name`; returns an error message, or null when stored. */
  const setSecret = useCallback(
    async (name: string, value: string): Promise<string | null> => {
      const n = name.trim();
      if (!isValidSecretName(n)) return `Not a valid secret name. ${SECRET_NAME_RULE}`;
      if (value === "") return "Enter the secret's value.";
      setBusy(n);
      setError(null);
      const failed = await attempt(commands.setSecret(n, value));
      setBusy(null);
      if (failed) return failed.message;
      await reload();
      return null;
    },
    [reload],
  );

  const deleteSecret = useCallback(
    async (name: string) => {
      setBusy(name);
      setError(null);
      const failed = await attempt(commands.deleteSecret(name));
      setBusy(null);
      if (failed) setError(`Could not delete ${name}: ${failed.message}`);
      else await reload();
    },
    [reload],
  );

  return { busy, error, setSecret, deleteSecret };
}
