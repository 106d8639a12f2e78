import { useEffect, useState, type ReactNode } from "react";
import { listen, type UnlistenFn } from "@tauri-apps/api/event";
import { events, type EngineEvent, type StatusChanged } from "../bindings";
import {
  ENGINE_EVENT,
  EngineEventsContext,
  type EngineEventSources,
  type EventFanOut,
} from "./useEngineEvents";

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
    for (const handler of [...this.handlers]) handler(event);
  }
}

/**
 * The app root's one subscription to each backend event (engine events, status changes),
 * handed to every screen through `useEngineEvents` / `useStatusChanged`: screens come and go
 * without each opening and closing its own IPC listener.
 */
export function EngineEventsProvider({ children }: { children: ReactNode }) {
  const [sources] = useState(() => ({
    engine: new FanOut<EngineEvent>(),
    statusChanged: new FanOut<StatusChanged>(),
  }));
  useEffect(() => {
    const offs: Promise<UnlistenFn>[] = [
      listen<EngineEvent>(ENGINE_EVENT, (e) => sources.engine.emit(e.payload)),
      events.statusChanged.listen((e) => sources.statusChanged.emit(e.payload)),
    ];
    return () => {
      for (const off of offs) void off.then((unlisten) => unlisten());
    };
  }, [sources]);
  const provided: EngineEventSources = sources;
  return <EngineEventsContext.Provider value={provided}>{children}</EngineEventsContext.Provider>;
}
