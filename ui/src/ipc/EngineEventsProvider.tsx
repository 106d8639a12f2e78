import { useEffect, useState, type ReactNode } from "react";
import type {
  EngineEvent,
  ModelCheckProgress,
  Progress,
  PullProgress,
  StatusChanged,
} from "../bindings";
import { onPushed } from "./pushed";
import { EngineEventsContext, type EngineEventSources, type EventFanOut } from "./useEngineEvents";

/** Handlers registered with one listener. */
class FanOut<T> implements EventFanOut<T> {
  private readonly handlers = new Set<(event: T) => void>();
  subscribe(handler: (event: T) => void): () => void {
    // A wrapper per subscription: the same handler subscribed twice is called twice.
    const entry = (event: T) => handler(event);
    this.handlers.add(entry);
    return () => this.handlers.delete(entry);
  }
  emit(event: T): void {
    for (const handler of [...this.handlers]) {
      try {
        handler(event);
      } catch (e) {
        // One screen's failing handler must not cost the others their events.
        console.error("an event handler failed", e);
      }
    }
  }
}

/**
 * The app root's one subscription to the backend's pushed events (engine events, status
 * changes), handed to every screen through `useEngineEvents` / `useStatusChanged`: screens come
 * and go without each subscribing on their own.
 */
export function EngineEventsProvider({ children }: { children: ReactNode }) {
  const [sources] = useState(() => ({
    engine: new FanOut<EngineEvent>(),
    statusChanged: new FanOut<StatusChanged>(),
    modelDownload: new FanOut<PullProgress>(),
    modelCheck: new FanOut<ModelCheckProgress>(),
    libraryIngest: new FanOut<Progress>(),
  }));
  useEffect(
    () =>
      onPushed((pushed) => {
        if (pushed.kind === "engine") sources.engine.emit(pushed.event);
        else if (pushed.kind === "status_changed") sources.statusChanged.emit(pushed.event);
        else if (pushed.kind === "model_download") sources.modelDownload.emit(pushed.event);
        else if (pushed.kind === "model_check") sources.modelCheck.emit(pushed.event);
        else if (pushed.kind === "library_ingest") sources.libraryIngest.emit(pushed.event);
      }),
    [sources],
  );
  const provided: EngineEventSources = sources;
  return <EngineEventsContext.Provider value={provided}>{children}</EngineEventsContext.Provider>;
}
