import { createContext, useContext, useEffect, useRef } from "react";
import type {
  EngineEvent,
  ModelCheckProgress,
  Progress,
  PullProgress,
  StatusChanged,
} from "../bindings";

/** Handlers of one kind of backend event, fed by a single listener (see EngineEventsProvider). */
export interface EventFanOut<T> {
  /** Call `handler` for every event until the returned function is called. */
  subscribe(handler: (event: T) => void): () => void;
}

/** What the app root provides: one subscription per backend event, shared by every screen. */
export interface EngineEventSources {
  engine: EventFanOut<EngineEvent>;
  statusChanged: EventFanOut<StatusChanged>;
  modelDownload: EventFanOut<PullProgress>;
  modelCheck: EventFanOut<ModelCheckProgress>;
  libraryIngest: EventFanOut<Progress>;
}

export const EngineEventsContext = createContext<EngineEventSources | null>(null);

function useSources(): EngineEventSources {
  const sources = useContext(EngineEventsContext);
  if (sources === null) throw new Error("engine events need an EngineEventsProvider above them");
  return sources;
}

function useFanOut<T>(fanOut: EventFanOut<T>, handler: (event: T) => void): void {
  const ref = useRef(handler);
  useEffect(() => {
    ref.current = handler;
  });
  useEffect(() => fanOut.subscribe((e) => ref.current(e)), [fanOut]);
}

/** Call `handler` for every engine event while mounted. */
export function useEngineEvents(handler: (event: EngineEvent) => void): void {
  useFanOut(useSources().engine, handler);
}

/** Call `handler` whenever the configuration reloaded (the new status) while mounted. */
export function useStatusChanged(handler: (event: StatusChanged) => void): void {
  useFanOut(useSources().statusChanged, handler);
}

/** Call `handler` for every model download progress report while mounted. */
export function useModelDownloads(handler: (event: PullProgress) => void): void {
  useFanOut(useSources().modelDownload, handler);
}

/** Call `handler` for every tool-use check progress report while mounted. */
export function useModelCheckEvents(handler: (event: ModelCheckProgress) => void): void {
  useFanOut(useSources().modelCheck, handler);
}

/** Call `handler` for every report of files being added to the library while mounted. */
export function useLibraryIngest(handler: (event: Progress) => void): void {
  useFanOut(useSources().libraryIngest, handler);
}

/** The app's one source of status changes, for effects that subscribe with their own
 * closures (`subscribe` returns the unsubscribe function). */
export function useStatusChanges(): EventFanOut<StatusChanged> {
  return useSources().statusChanged;
}
