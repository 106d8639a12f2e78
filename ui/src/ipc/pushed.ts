import { commands, type Pushed } from "../bindings";

/**
 * Events the backend pushes (engine events, status changes, close requests), fetched by one
 * long poll for the page's lifetime: `next_events` answers as soon as events are queued (all
 * of them, in order) or after 25 s with none, and the loop asks again. Not Tauri's events: on
 * Linux those are delivered by evaluating script, which loads WebKit's JavaScript engine into
 * the app process (see src-tauri/src/events.rs).
 */
type Handler = (event: Pushed) => void;

const handlers = new Set<Handler>();
let polling = false;

/** Call `handler` for every pushed event until the returned function is called. The first
 * subscription starts the poll. */
export function onPushed(handler: Handler): () => void {
  const entry: Handler = (event) => handler(event);
  handlers.add(entry);
  if (!polling) {
    polling = true;
    void poll();
  }
  return () => {
    handlers.delete(entry);
  };
}

/** How long to wait before asking again after a failed fetch (the loop never spins). */
const RETRY_MS = 1000;

async function poll(): Promise<void> {
  for (;;) {
    let batch: Pushed[];
    try {
      const res = await commands.nextEvents();
      if (res.status !== "ok") throw new Error(res.error.message);
      batch = res.data;
    } catch (e) {
      console.warn("could not fetch the backend's events; trying again", e);
      await new Promise((resolve) => setTimeout(resolve, RETRY_MS));
      continue;
    }
    for (const event of batch)
      for (const handler of [...handlers]) {
        try {
          handler(event);
        } catch (e) {
          // One screen's failing handler must not cost the others their events.
          console.error("an event handler failed", e);
        }
      }
  }
}

let holds = 0;
const closeHandlers = new Set<() => void>();

/**
 * While held (one or more holders), closing the window is left to the web view: the backend
 * pushes `close_requested` instead of closing, and `onRequest` is called. Returns the release
 * function.
 */
export function holdClose(onRequest: () => void): () => void {
  const entry = () => onRequest();
  closeHandlers.add(entry);
  if (holds++ === 0) void commands.holdWindowClose(true).catch(() => undefined);
  const off = onPushed((event) => {
    if (event.kind === "close_requested" && closeHandlers.has(entry)) entry();
  });
  let released = false;
  return () => {
    if (released) return;
    released = true;
    off();
    closeHandlers.delete(entry);
    if (--holds === 0) void commands.holdWindowClose(false).catch(() => undefined);
  };
}
