import { createContext, useContext, useMemo, useSyncExternalStore, type ReactNode } from "react";
import { commands, type AgentInfo, type SettingsView } from "../bindings";
import { IpcError, call } from "./call";
import { useStatusChanged } from "./useEngineEvents";

/** What a screen sees of one shared answer of the backend. */
export interface SharedState<T> {
  /** The latest answer; null until the first one arrived (or when it failed). */
  value: T | null;
  /** Why the latest fetch failed, if it did. */
  error: IpcError | null;
  /** Until the first answer, and during a `reload`. */
  loading: boolean;
}

/**
 * One answer of the backend (the agents, the settings) that every screen showing it shares:
 * fetched when a screen first asks for it, again when the configuration reloads and on
 * `reload`. A newer fetch wins over an older one still on its way.
 */
export class Shared<T> {
  private state: SharedState<T> = { value: null, error: null, loading: true };
  private readonly listeners = new Set<() => void>();
  private asked = false;
  private generation = 0;

  constructor(private readonly fetcher: () => Promise<T>) {}

  readonly get = (): SharedState<T> => this.state;

  readonly subscribe = (listener: () => void): (() => void) => {
    this.listeners.add(listener);
    if (!this.asked) void this.fetch(false);
    return () => {
      this.listeners.delete(listener);
    };
  };

  /** Fetch again, showing `loading` meanwhile (after a change the screen made). */
  readonly reload = (): Promise<void> => this.fetch(true);

  /** Fetch again if a screen asked before (the configuration changed). */
  readonly refresh = (): void => {
    if (this.asked) void this.fetch(false);
  };

  private async fetch(showLoading: boolean): Promise<void> {
    this.asked = true;
    const mine = ++this.generation;
    if (showLoading && !this.state.loading) this.set({ ...this.state, loading: true });
    try {
      const value = await this.fetcher();
      if (mine === this.generation) this.set({ value, error: null, loading: false });
    } catch (e: unknown) {
      if (mine !== this.generation) return;
      const error = e instanceof IpcError ? e : new IpcError("transport", String(e));
      this.set({ ...this.state, error, loading: false });
    }
  }

  private set(next: SharedState<T>) {
    this.state = next;
    this.listeners.forEach((listener) => listener());
  }
}

interface SharedSources {
  agents: Shared<AgentInfo[]>;
  settings: Shared<SettingsView>;
}

const SharedContext = createContext<SharedSources | null>(null);

/** The app root's shared answers: the agents and the settings, each fetched for every screen
 * at once, and fetched again when the configuration reloads. */
export function SharedDataProvider({ children }: { children: ReactNode }) {
  const sources = useMemo<SharedSources>(
    () => ({
      agents: new Shared(() => call(commands.listAgents())),
      settings: new Shared(() => call(commands.getSettings())),
    }),
    [],
  );
  useStatusChanged(() => {
    sources.agents.refresh();
    sources.settings.refresh();
  });
  return <SharedContext.Provider value={sources}>{children}</SharedContext.Provider>;
}

function useShared<T>(pick: (sources: SharedSources) => Shared<T>) {
  const sources = useContext(SharedContext);
  if (sources === null) throw new Error("shared data needs a SharedDataProvider above it");
  const source = pick(sources);
  const state = useSyncExternalStore(source.subscribe, source.get);
  return { ...state, reload: source.reload };
}

/** Every agent (internal ones included), shared by the chat, the palette and the rest. */
export function useAgents(): SharedState<AgentInfo[]> & { reload: () => Promise<void> } {
  return useShared((s) => s.agents);
}

/** The settings view, shared by the Settings screen, the chat and the first-run setup. */
export function useSharedSettings(): SharedState<SettingsView> & { reload: () => Promise<void> } {
  return useShared((s) => s.settings);
}
