import { useCallback, useMemo, useState } from "react";
import { commands, type Api, type ModelProfile } from "../../bindings";
import {
  applyPreset,
  buildProfile,
  chooseApi,
  placeSaveErrors,
  replaceAt,
  updateDraft,
  type ProfileDraft,
  type SaveErrors,
} from "./profileDraft";
import { attempt } from "../../ipc/call";
import { useConnectionTest } from "./useConnectionTest";

const NO_ERRORS: SaveErrors = { fields: {}, general: [] };

export interface ProfileEditorOptions {
  /** Every profile as loaded; the edited one is at `index` (null for a new one). */
  profiles: readonly ModelProfile[];
  index: number | null;
  initial: ProfileDraft;
  /** Called after the profiles (and the key, if one was typed) were saved. */
  onSaved: () => void | Promise<void>;
}

/**
 * The profile form's state and actions. Saving sends the whole list through `save_profiles`
 * (validated by the backend's loader; its errors are placed next to the fields) and then stores
 * a typed key in the keyring; the key field is cleared once stored.
 */
export function useProfileEditor({ profiles, index, initial, onSaved }: ProfileEditorOptions) {
  const [draft, setDraft] = useState<ProfileDraft>(initial);
  // The draft as the form opened, to tell whether anything was changed since.
  const [opened] = useState<ProfileDraft>(initial);
  const dirty = useMemo(() => JSON.stringify(draft) !== JSON.stringify(opened), [draft, opened]);
  const [errors, setErrors] = useState<SaveErrors>(NO_ERRORS);
  const [busy, setBusy] = useState<"saving" | "testing" | null>(null);
  /** The name under which a key from this form was stored, to say so. */
  const [storedAs, setStoredAs] = useState<string | null>(null);
  const test = useConnectionTest();

  const update = useCallback((patch: Partial<ProfileDraft>) => {
    setDraft((d) => updateDraft(d, patch));
  }, []);

  const choosePreset = useCallback((id: string) => {
    setDraft((d) => applyPreset(d, id));
  }, []);

  const setApi = useCallback((api: Api) => {
    setDraft((d) => chooseApi(d, api));
  }, []);

  /** Store a typed key (if any); returns false when the keyring refused. */
  const storeKey = async (d: ProfileDraft, name: string, prefix: string): Promise<boolean> => {
    if (!d.useKey || d.keyValue === "") return true;
    const failed = await attempt(commands.setSecret(name, d.keyValue));
    if (failed) {
      setErrors({ fields: {}, general: [`${prefix}${failed.message}`] });
      return false;
    }
    setDraft((cur) => ({ ...cur, keyValue: "" }));
    setStoredAs(name);
    return true;
  };

  const save = async (): Promise<boolean> => {
    const built = buildProfile(draft);
    if (!built.ok) {
      setErrors({ fields: built.errors, general: [] });
      return false;
    }
    setBusy("saving");
    setErrors(NO_ERRORS);
    try {
      const { list, index: at } = replaceAt(profiles, index, built.profile);
      const failed = await attempt(commands.saveProfiles(list));
      if (failed) {
        setErrors(
          failed.code === "invalid_config"
            ? placeSaveErrors(failed.message, at, list)
            : { fields: {}, general: [failed.message] },
        );
        return false;
      }
      const secret = draft.secretName.trim();
      const stored = await storeKey(
        draft,
        secret,
        `The profile was saved, but the key could not be stored as ${secret}: `,
      );
      if (!stored) return false;
      await onSaved();
      return true;
    } finally {
      setBusy(null);
    }
  };

  /** Test the form as it is; a typed key is stored first so the backend can use it. */
  const runTest = async (): Promise<void> => {
    const built = buildProfile(draft);
    if (!built.ok) {
      setErrors({ fields: built.errors, general: [] });
      test.fail("Fix the highlighted fields first.");
      return;
    }
    setBusy("testing");
    setErrors(NO_ERRORS);
    try {
      const secret = draft.secretName.trim();
      const stored = await storeKey(draft, secret, `The key could not be stored as ${secret}: `);
      if (!stored) {
        test.reset();
        return;
      }
      await test.run(built.profile);
    } finally {
      setBusy(null);
    }
  };

  return {
    draft,
    /** The profile's name as the form opened (empty for a new one). */
    openedName: opened.name,
    /** Whether the form holds changes not saved (switching screens asks first). */
    dirty,
    update,
    choosePreset,
    setApi,
    errors,
    busy,
    storedAs,
    save,
    runTest,
    test: test.state,
  };
}

export type ProfileEditor = ReturnType<typeof useProfileEditor>;
