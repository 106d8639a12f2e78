import "@testing-library/jest-dom/vitest";
import { afterEach, beforeAll, expect, vi } from "vitest";
import { cleanup, configure } from "@testing-library/react";
import { clearMocks } from "@tauri-apps/api/mocks";

// Every mocked IPC answers the pushed-events long poll and the close hold from src/test/pushed.ts
// (tests push events there), whatever else the test's own handler answers.
vi.mock("@tauri-apps/api/mocks", async (importOriginal) => {
  const real = await importOriginal<typeof import("@tauri-apps/api/mocks")>();
  const pushed = await import("./pushed");
  const mockIPC: typeof real.mockIPC = (handler, options) =>
    real.mockIPC((cmd, args) => {
      if (cmd === "next_events") return pushed.nextEvents();
      if (cmd === "hold_window_close") return pushed.holdWindowClose(args as { held: boolean });
      return handler(cmd, args);
    }, options);
  return { ...real, mockIPC };
});

// The Markdown renderer loads after the window's first frame (components show plain text until
// then): tests get it loaded, as a window has it a moment after start, except the test of that
// wait itself.
beforeAll(async () => {
  if (!expect.getState().testPath?.endsWith("lazyMarkdown.test.tsx")) {
    await (await import("../components/markdownLoader")).loadMarkdown();
  }
});

// findBy*/waitFor wait for what renders, however long a loaded machine takes to get there
// (Testing Library's default gives up after 1 s: a full-suite run on two busy cores took longer
// for a screen's second backend round trip, about one run in five). A test that waits for
// something that never comes still fails, at this bound or at the test timeout.
configure({ asyncUtilTimeout: 15_000 });

// jsdom has <dialog> but not its modal methods.
if (typeof HTMLDialogElement !== "undefined" && !HTMLDialogElement.prototype.showModal) {
  HTMLDialogElement.prototype.showModal = function (this: HTMLDialogElement) {
    this.setAttribute("open", "");
  };
  HTMLDialogElement.prototype.close = function (this: HTMLDialogElement) {
    this.removeAttribute("open");
  };
}

// jsdom does no layout; give the scroll container of virtualised lists a viewport.
const realRect = HTMLElement.prototype.getBoundingClientRect;
HTMLElement.prototype.getBoundingClientRect = function (this: HTMLElement) {
  if (this.classList.contains("timeline") || this.classList.contains("conv-scroll"))
    return DOMRect.fromRect({ width: 800, height: 600 });
  return realRect.call(this);
};
for (const [prop, value] of [
  ["offsetHeight", 600],
  ["offsetWidth", 800],
] as const) {
  Object.defineProperty(HTMLElement.prototype, prop, {
    configurable: true,
    get(this: HTMLElement) {
      return this.classList.contains("timeline") || this.classList.contains("conv-scroll")
        ? value
        : 0;
    },
  });
}

// TanStack Virtual reads the viewport from clientWidth/clientHeight (the conversation list).
for (const [prop, value] of [
  ["clientHeight", 600],
  ["clientWidth", 260],
] as const) {
  Object.defineProperty(HTMLElement.prototype, prop, {
    configurable: true,
    get(this: HTMLElement) {
      return this.classList.contains("conv-scroll") ? value : 0;
    },
  });
}

afterEach(async () => {
  cleanup();
  // Unmounting unsubscribes event listeners asynchronously; let that finish before the mock
  // IPC it talks to is removed.
  await new Promise((resolve) => setTimeout(resolve, 0));
  clearMocks();
  localStorage.clear();
});
