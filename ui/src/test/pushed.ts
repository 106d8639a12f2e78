import type { EngineEvent, Pushed, StatusChanged } from "../bindings";

/**
 * The backend's side of the pushed-events long poll, for tests: every mocked IPC answers
 * `next_events` from here (see setup.ts), and a test pushes events with `pushEngine` and
 * friends. A push resolves once the app has handled it: when the poll asks again, which it
 * does right after handing its batch out.
 */
let queued: Pushed[] = [];
let waiting: ((batch: Pushed[]) => void) | null = null;
/** Pushers waiting for their batch to go out, then for the next poll. */
let untilDelivered: (() => void)[] = [];
let untilNextPoll: (() => void)[] = [];
let held = false;

function deliver(resolve: (batch: Pushed[]) => void, batch: Pushed[]): void {
  untilNextPoll.push(...untilDelivered);
  untilDelivered = [];
  resolve(batch);
}

/** The mocked `next_events` command. */
export function nextEvents(): Promise<Pushed[]> {
  const polled = untilNextPoll;
  untilNextPoll = [];
  for (const resolve of polled) resolve();
  return new Promise((resolve) => {
    if (queued.length > 0) {
      const batch = queued;
      queued = [];
      deliver(resolve, batch);
    } else {
      waiting = (batch) => deliver(resolve, batch);
    }
  });
}

/** The mocked `hold_window_close` command. */
export function holdWindowClose(args: { held: boolean }): null {
  held = args.held;
  return null;
}

/** Whether the app holds closing the window (asked the backend to). */
export function closeHeld(): boolean {
  return held;
}

/** Push `events`; resolves when the app has handled them. */
export function push(...events: Pushed[]): Promise<void> {
  const handled = new Promise<void>((resolve) => untilDelivered.push(resolve));
  if (waiting) {
    const take = waiting;
    waiting = null;
    take(events);
  } else {
    queued.push(...events);
  }
  return handled;
}

/** Push an engine event (tests build partial ones too). */
export const pushEngine = (event: Partial<EngineEvent> | Record<string, unknown>) =>
  push({ kind: "engine", event: event as EngineEvent });

/** Push a status change. */
export const pushStatus = (event: Partial<StatusChanged> | Record<string, unknown>) =>
  push({ kind: "status_changed", event: event as StatusChanged });

/** The user asks to close the window. */
export const pushCloseRequest = () => push({ kind: "close_requested" });
