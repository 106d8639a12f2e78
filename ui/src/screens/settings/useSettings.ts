import type { SettingsView } from "../../bindings";
import type { IpcError } from "../../ipc/call";
import { useSharedSettings } from "../../ipc/shared";

export interface SettingsState {
  settings: SettingsView | null;
  error: IpcError | null;
  loading: boolean;
  /** Fetch again (after a change); the configuration reloading fetches them by itself. */
  reload: () => Promise<void>;
}

/** Everything the Settings screen shows: the app's one shared settings view (see
 * `ipc/shared`), so a change made here reaches the chat and the rest at once. */
export function useSettings(): SettingsState {
  const { value, error, loading, reload } = useSharedSettings();
  return { settings: value, error, loading, reload };
}
