/**
 * The conversation list's first page, asked for as soon as the app's script runs.
 *
 * The list is what the window shows first. Asking for its page from the list's effect waited
 * for the whole script to run and React to mount the shell (a few hundred ms at start); asked
 * here, at module load (main.tsx imports this first), the engine answers while that happens,
 * and the list's first render uses the answer. Marks on the page's performance timeline
 * (`artifactflow:*`) let the benchmark say where the startup time went.
 */
import { commands, type AppError, type ConversationPage, type Result } from "../../bindings";

/** Rows asked for at a time: a screen and a half of the list. */
export const PAGE = 60;

/** A mark on the page's timeline (no-op where there is none); `once`: only the first time
 * this page loaded (e.g. when the list first showed rows). */
export function mark(name: string, once = false): void {
  const perf = globalThis.performance;
  const full = `artifactflow:${name}`;
  if (once && perf?.getEntriesByName?.(full).length) return;
  perf?.mark?.(full);
}

let early: Promise<Result<ConversationPage, AppError>> | null = null;

/** Ask for the first page of the whole list now (once; a second call does nothing). */
export function askFirstPageEarly(): void {
  if (early) return;
  mark("list-asked");
  early = commands.listConversationPage(null, PAGE, 0);
}

/** The early answer, when one was asked for and this is what the list wants (the first `PAGE`
 * rows, no query); given out once: later loads ask the engine again, for fresh rows. */
export function takeFirstPage(
  query: string | null,
  limit: number,
  offset: number,
): Promise<Result<ConversationPage, AppError>> | null {
  if (!early || query !== null || limit !== PAGE || offset !== 0) return null;
  const page = early;
  early = null;
  return page;
}
