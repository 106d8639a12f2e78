import { useEffect, useRef } from "react";
import { listen } from "@tauri-apps/api/event";
import type { EngineEvent } from "../bindings";

/** The Tauri event carrying engine events (see src-tauri/src/events.rs). */
export const ENGINE_EVENT = "engine-event";

/** Call `handler` for every engine event while mounted. */
export function useEngineEvents(handler: (event: EngineEvent) => void): void {
  const ref = useRef(handler);
  useEffect(() => {
    ref.current = handler;
  });
  useEffect(() => {
    const off = listen<EngineEvent>(ENGINE_EVENT, (e) => ref.current(e.payload));
    return () => {
      void off.then((unlisten) => unlisten());
    };
  }, []);
}
