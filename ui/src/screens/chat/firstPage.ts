/**
 * The conversation list's first page, there before the list's first render.
 *
 * The list is what the window shows first. At start, the desktop shell puts its first page in
 * the page itself (`window.__ARTIFACTFLOW_FIRST_PAGE__`, src-tauri/src/first_page.rs): asked
 * for over IPC, the answer waited a few hundred ms for the shell's busy main thread. The list's
 * first render uses it directly. A reload (or a shell without it) asks the engine here, at
 * module load (main.tsx imports this first), so the answer comes while React mounts. Marks on
 * the page's performance timeline (`artifactflow:*`) let the benchmark say where the startup
 * time went.
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

/** The page the shell put in the page at start, until the list takes it. */
let given: ConversationPage | null = null;

/** What the shell's initialization script sets: the page, and how many rows it asked for. */
interface FromShell {
  rows: number;
  page: ConversationPage;
}

declare global {
  interface Window {
    __ARTIFACTFLOW_FIRST_PAGE__?: FromShell;
  }
}

/** Is this page a reload? The shell's page was read when the app started: a reload's list may
 * have changed since. */
function reloaded(): boolean {
  const nav = globalThis.performance?.getEntriesByType?.("navigation")[0] as
    PerformanceNavigationTiming | undefined;
  return nav?.type === "reload";
}

/** Take the shell's first page, or ask the engine for it now (once; a second call does
 * nothing). */
export function askFirstPageEarly(): void {
  if (early || given) return;
  const fromShell = globalThis.window?.__ARTIFACTFLOW_FIRST_PAGE__;
  mark("list-asked");
  if (fromShell && fromShell.rows === PAGE && !reloaded()) {
    given = fromShell.page;
    mark("list-answered");
    return;
  }
  early = commands.listConversationPage(null, PAGE, 0);
}

/** The shell's first page, for the list's first render (without taking it: React may render
 * twice). */
export function givenFirstPage(): ConversationPage | null {
  return given;
}

/** The early answer, when one was asked for and this is what the list wants (the first `PAGE`
 * rows, no query); given out once: later loads ask the engine again, for fresh rows. */
export function takeFirstPage(
  query: string | null,
  limit: number,
  offset: number,
): Promise<Result<ConversationPage, AppError>> | null {
  if (query !== null || limit !== PAGE || offset !== 0) return null;
  if (given) {
    const page = given;
    given = null;
    return Promise.resolve({ status: "ok", data: page });
  }
  if (!early) return null;
  const page = early;
  early = null;
  return page;
}
