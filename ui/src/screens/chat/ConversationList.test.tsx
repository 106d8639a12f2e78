import { act, fireEvent, screen, waitFor, within } from "@testing-library/react";
import userEvent from "@testing-library/user-event";
import { pushEngine } from "../../test/pushed";
import { mockIPC } from "@tauri-apps/api/mocks";
import type { ConversationSummary } from "../../bindings";
import { render } from "../../test/render";
import { ChatScreen } from "./ChatScreen";
import { ChatStoreProvider } from "./ChatStoreProvider";
import { dateGroup, withGroups } from "./dateGroups";
import { askFirstPageEarly } from "./firstPage";
import { PAGE, samePage } from "./useConversationPages";

const HOUR = 3_600_000;

function conversation(i: number, updated: Date): ConversationSummary {
  return {
    id: `c${i}`,
    title: `Conversation ${i}`,
    agent: "lead_agent",
    updated_at: updated.toISOString(),
    last_status: "completed",
    always_allowed: [],
  };
}

type Respond = (args: { query: string | null; limit: number; offset: number }) => unknown;

/** An engine with `all` conversations that pages and searches them (titles) as the real one. */
function backend(all: ConversationSummary[], respond?: Respond) {
  const pages: { query: string | null; limit: number; offset: number }[] = [];
  const deleted: string[] = [];
  mockIPC((cmd, raw) => {
    const args = raw as { query: string | null; limit: number; offset: number; id: string };
    if (cmd === "list_conversation_page") {
      pages.push({ query: args.query, limit: args.limit, offset: args.offset });
      if (respond) return respond(args);
      const q = args.query?.toLowerCase();
      const found = all.filter(
        (c) => !deleted.includes(c.id) && (!q || c.title.toLowerCase().includes(q)),
      );
      return {
        items: found.slice(args.offset, args.offset + args.limit),
        total: found.length,
      };
    }
    if (cmd === "list_agents")
      return [{ name: "lead_agent", description: "", model: null, internal: false }];
    if (cmd === "delete_conversation") {
      deleted.push(args.id);
      return null;
    }
    throw new Error(`unexpected ${cmd}`);
  });
  return { pages, deleted };
}

const chat = () =>
  render(
    <ChatStoreProvider>
      <ChatScreen />
    </ChatStoreProvider>,
  );

describe("conversation list", () => {
  it(
    "renders only the rows in view of 5,000 conversations and pages in more as it scrolls",
    { timeout: 20_000 },
    async () => {
      const now = Date.now();
      const all = Array.from({ length: 5000 }, (_, i) => conversation(i, new Date(now - i * HOUR)));
      const { pages } = backend(all);
      chat();
      await screen.findByText("Conversation 0");
      expect(pages[0]).toEqual({ query: null, limit: PAGE, offset: 0 });
      // Only what fits the 600 px viewport (plus overscan) is in the DOM.
      const shown = screen.getAllByTestId("conversation-item").length;
      expect(shown).toBeGreaterThan(5);
      expect(shown).toBeLessThan(40);
      expect(screen.queryByText(`Conversation ${PAGE - 1}`)).toBeNull();

      // Scrolling to the end of the loaded rows asks for the next page.
      const list = screen.getByTestId("conversation-list");
      expect(pages).toHaveLength(1);
      await act(async () => {
        list.scrollTop = PAGE * 52 - 600;
        fireEvent.scroll(list);
      });
      await waitFor(() => expect(pages).toContainEqual({ query: null, limit: PAGE, offset: PAGE }));
      expect(await screen.findByText(`Conversation ${PAGE - 1}`)).toBeInTheDocument();
      expect(screen.getAllByTestId("conversation-item").length).toBeLessThan(60);
      expect(pages).toHaveLength(2);
    },
  );

  it("shows the first page asked for before the app mounted, without asking again", async () => {
    const now = Date.now();
    const all = Array.from({ length: 100 }, (_, i) => conversation(i, new Date(now - i * HOUR)));
    const { pages } = backend(all);
    // What main.tsx does (through startList.ts) before React renders anything.
    askFirstPageEarly();
    expect(pages).toEqual([{ query: null, limit: PAGE, offset: 0 }]);
    chat();
    expect(await screen.findByText("Conversation 0")).toBeInTheDocument();
    expect(pages).toHaveLength(1);
  });

  it("renders the page the shell put in the window on its first render, without asking", async () => {
    const now = Date.now();
    const all = Array.from({ length: 100 }, (_, i) => conversation(i, new Date(now - i * HOUR)));
    const { pages } = backend(all);
    window.__ARTIFACTFLOW_FIRST_PAGE__ = {
      rows: PAGE,
      page: { items: all.slice(0, PAGE), total: all.length },
    };
    try {
      askFirstPageEarly();
      chat();
      // Synchronously: no wait for an answer.
      expect(screen.getByText("Conversation 0")).toBeInTheDocument();
      // The list's effect then takes the page (the same rows), still without asking.
      await act(async () => {});
      expect(screen.getAllByTestId("conversation-item")[0]).toHaveTextContent("Conversation 0");
      expect(pages).toEqual([]);
    } finally {
      delete window.__ARTIFACTFLOW_FIRST_PAGE__;
    }
  });

  it("asks the engine when the shell's page was for another page size", async () => {
    const now = Date.now();
    const all = Array.from({ length: 100 }, (_, i) => conversation(i, new Date(now - i * HOUR)));
    const { pages } = backend(all);
    window.__ARTIFACTFLOW_FIRST_PAGE__ = {
      rows: PAGE + 1,
      page: { items: [conversation(999, new Date(now))], total: 1 },
    };
    try {
      askFirstPageEarly();
      chat();
      expect(await screen.findByText("Conversation 0")).toBeInTheDocument();
      expect(screen.queryByText("Conversation 999")).toBeNull();
      expect(pages).toEqual([{ query: null, limit: PAGE, offset: 0 }]);
    } finally {
      delete window.__ARTIFACTFLOW_FIRST_PAGE__;
    }
  });

  it(
    "asks for the next page again when a refresh drops the one on its way (the list stays at its end)",
    { timeout: 20_000 },
    async () => {
      const now = Date.now();
      const all = Array.from({ length: 5000 }, (_, i) => conversation(i, new Date(now - i * HOUR)));
      let release: (() => void) | null = null;
      const { pages } = backend(all, ({ limit, offset }) => {
        const page = { items: all.slice(offset, offset + limit), total: all.length };
        // The first request for the second page is answered only when the test says so.
        if (offset === PAGE && pages.filter((p) => p.offset === PAGE).length === 1)
          return new Promise((resolve) => (release = () => resolve(page)));
        return page;
      });
      chat();
      await screen.findByText("Conversation 0");
      const list = screen.getByTestId("conversation-list");
      await act(async () => {
        list.scrollTop = PAGE * 52 - 600;
        fireEvent.scroll(list);
      });
      await waitFor(() => expect(release).not.toBeNull());

      // A run ends meanwhile (one more conversation): the list refreshes (its first page
      // again), and that answer arrives before the second page's, which is then dropped.
      all.push(conversation(5000, new Date(now - 5000 * HOUR)));
      await act(() =>
        pushEngine({
          type: "run_ended",
          conversation_id: "c0",
          run_id: "r1",
          status: "completed",
          final_answer: null,
          error: null,
        }),
      );
      expect(await screen.findByRole("button", { name: "Show more (4941 left)" })).toBeVisible();
      await act(async () => release?.());

      // Still at the end of the loaded rows: the list asks again and shows the second page.
      expect(await screen.findByRole("button", { name: "Show more (4881 left)" })).toBeVisible();
      expect(pages.filter((p) => p.offset === PAGE)).toHaveLength(2);
    },
  );

  it(
    "asks for the next page when the scroll position nears the end, whatever the rows in view",
    { timeout: 20_000 },
    async () => {
      const now = Date.now();
      const all = Array.from({ length: 5000 }, (_, i) => conversation(i, new Date(now - i * HOUR)));
      const { pages } = backend(all);
      chat();
      await screen.findByText("Conversation 0");
      const list = screen.getByTestId("conversation-list");
      // jsdom has no layout: the scroll height says 100 px are left below the view while the
      // rows the virtualiser shows (for a scroll offset of 800 px) are still well above its
      // threshold; once the next page is asked for, the list is as tall as a real one.
      Object.defineProperty(list, "scrollHeight", {
        configurable: true,
        get: () => (pages.length === 1 ? 1500 : 100_000),
      });
      await act(async () => {
        list.scrollTop = 800;
        fireEvent.scroll(list);
      });
      await waitFor(() => expect(pages).toContainEqual({ query: null, limit: PAGE, offset: PAGE }));
      expect(await screen.findByRole("button", { name: "Show more (4880 left)" })).toBeVisible();
      expect(pages).toHaveLength(2);
    },
  );

  it(
    "shows a failed page with Retry and asks again only when told",
    { timeout: 20_000 },
    async () => {
      const now = Date.now();
      const all = Array.from({ length: 5000 }, (_, i) => conversation(i, new Date(now - i * HOUR)));
      const { pages } = backend(all, ({ limit, offset }) => {
        if (offset === PAGE && pages.filter((p) => p.offset === PAGE).length === 1)
          throw { code: "database", message: "database is locked" };
        return { items: all.slice(offset, offset + limit), total: all.length };
      });
      const user = userEvent.setup();
      chat();
      await screen.findByText("Conversation 0");
      const list = screen.getByTestId("conversation-list");
      await act(async () => {
        list.scrollTop = PAGE * 52 - 600;
        fireEvent.scroll(list);
      });
      const alert = await screen.findByRole("alert");
      expect(alert).toHaveTextContent("Could not load more conversations: database is locked");
      // Not asked again in a loop while the error shows.
      expect(pages.filter((p) => p.offset === PAGE)).toHaveLength(1);
      expect(screen.getByRole("button", { name: "Show more (4940 left)" })).toBeVisible();

      await user.click(within(alert).getByRole("button", { name: "Retry" }));
      expect(await screen.findByRole("button", { name: "Show more (4880 left)" })).toBeVisible();
      expect(screen.queryByRole("alert")).toBeNull();
      expect(pages.filter((p) => p.offset === PAGE)).toHaveLength(2);
    },
  );

  it(
    "searches in the engine on every keystroke and drops the results of an older query",
    { timeout: 20_000 },
    async () => {
      const now = new Date();
      const all = [conversation(1, now), conversation(2, now), conversation(12, now)];
      const slow: ((v: unknown) => void)[] = [];
      const { pages } = backend(all, ({ query }) => {
        const items = all.filter((c) => !query || c.title.includes(query));
        const page = { items, total: items.length };
        // The answer to "Conversation 1" comes last, after the one to "Conversation 12".
        if (query === "Conversation 1")
          return new Promise((resolve) => slow.push(() => resolve(page)));
        return page;
      });
      const user = userEvent.setup();
      chat();
      await screen.findByText("Conversation 2");
      await user.type(
        screen.getByRole("searchbox", { name: "Search conversations" }),
        "Conversation 12",
      );
      await waitFor(() => expect(screen.queryByText("Conversation 2")).toBeNull());
      expect(pages.map((p) => p.query).at(-1)).toBe("Conversation 12");
      expect(screen.getAllByTestId("conversation-item")).toHaveLength(1);
      await act(async () => slow.forEach((resolve) => resolve(null)));
      expect(screen.getAllByTestId("conversation-item")).toHaveLength(1);
      expect(screen.getByText("Conversation 12")).toBeInTheDocument();

      await user.clear(screen.getByRole("searchbox", { name: "Search conversations" }));
      await user.type(screen.getByRole("searchbox", { name: "Search conversations" }), "zzz");
      expect(await screen.findByTestId("no-conversations")).toHaveTextContent(
        "No conversation matches.",
      );
    },
  );

  it("groups conversations by date under headings", async () => {
    const now = new Date();
    const daysAgo = (d: number) =>
      new Date(now.getFullYear(), now.getMonth(), now.getDate() - d, 12);
    backend([
      conversation(1, now),
      conversation(2, daysAgo(1)),
      conversation(3, daysAgo(4)),
      conversation(4, daysAgo(20)),
      conversation(5, daysAgo(70)),
    ]);
    chat();
    await screen.findByText("Conversation 5");
    const month = daysAgo(70).toLocaleDateString(undefined, { month: "long", year: "numeric" });
    expect(screen.getAllByTestId("conversation-group").map((h) => h.textContent)).toEqual([
      "Today",
      "Yesterday",
      "Previous 7 days",
      "Previous 30 days",
      month,
    ]);
  });

  it(
    "offers rename, export and delete in a keyboard-operable menu, and asks before deleting",
    { timeout: 20_000 },
    async () => {
      const { deleted } = backend([conversation(1, new Date()), conversation(2, new Date())]);
      const user = userEvent.setup();
      chat();
      await screen.findByText("Conversation 1");
      // No action links under every row any more.
      expect(screen.queryByRole("button", { name: /^(Rename|Delete|Export) / })).toBeNull();
      expect(screen.queryByRole("menu")).toBeNull();

      const more = screen.getByRole("button", { name: "Actions for Conversation 1" });
      expect(more).toHaveAttribute("aria-haspopup", "menu");
      more.focus();
      await user.keyboard("{Enter}");
      const menu = screen.getByRole("menu", { name: "Actions for Conversation 1" });
      expect(more).toHaveAttribute("aria-expanded", "true");
      expect(within(menu).getByRole("menuitem", { name: "Rename" })).toHaveFocus();
      await user.keyboard("{ArrowDown}");
      expect(within(menu).getByRole("menuitem", { name: "Export" })).toHaveFocus();
      await user.keyboard("{ArrowDown}{ArrowDown}");
      expect(within(menu).getByRole("menuitem", { name: "Rename" })).toHaveFocus();
      await user.keyboard("{Escape}");
      expect(screen.queryByRole("menu")).toBeNull();
      expect(more).toHaveFocus();

      // A press elsewhere closes it too.
      await user.click(more);
      expect(screen.getByRole("menu")).toBeInTheDocument();
      await user.click(screen.getByRole("searchbox", { name: "Search conversations" }));
      expect(screen.queryByRole("menu")).toBeNull();

      // Delete asks first; No keeps it.
      await user.click(more);
      await user.click(screen.getByRole("menuitem", { name: "Delete" }));
      expect(screen.getByText("Delete?")).toBeInTheDocument();
      await user.click(screen.getByRole("button", { name: "No" }));
      expect(deleted).toEqual([]);
      await user.click(screen.getByRole("button", { name: "Actions for Conversation 1" }));
      await user.click(screen.getByRole("menuitem", { name: "Delete" }));
      await user.click(screen.getByRole("button", { name: "Yes" }));
      await waitFor(() => expect(screen.queryByText("Conversation 1")).toBeNull());
      expect(deleted).toEqual(["c1"]);
    },
  );
});

describe("date groups", () => {
  const now = new Date(2026, 10, 30, 9, 0); // 30 November 2026, 09:00 local
  it("tells a refreshed page that shows the same rows from one that changed", () => {
    const at = new Date("2026-12-01T10:00:00Z");
    const first = conversation(1, at);
    const second = { ...conversation(2, at), always_allowed: ["web_search"] };
    const a = { ...first };
    const b = { ...second, always_allowed: [...second.always_allowed] };
    expect(samePage([first, second], [a, b])).toBe(true);
    expect(samePage([first, second], [b])).toBe(false);
    expect(samePage([first, second], [a, { ...b, title: "Renamed" }])).toBe(false);
    expect(samePage([first, second], [a, { ...b, last_status: "failed" }])).toBe(false);
    expect(samePage([first, second], [a, { ...b, always_allowed: [] }])).toBe(false);
    expect(samePage([first, second], [b, a])).toBe(false);
  });

  it("names each day range and then the month", () => {
    const at = (y: number, m: number, d: number, h = 12) => new Date(y, m, d, h).toISOString();
    expect(dateGroup(at(2026, 10, 30, 0), now)).toBe("Today");
    expect(dateGroup(at(2026, 10, 29, 23), now)).toBe("Yesterday");
    expect(dateGroup(at(2026, 10, 24), now)).toBe("Previous 7 days");
    expect(dateGroup(at(2026, 10, 23), now)).toBe("Previous 30 days");
    expect(dateGroup(at(2026, 10, 1), now)).toBe("Previous 30 days");
    expect(dateGroup(at(2026, 9, 31), now)).toBe(
      new Date(2026, 9, 31).toLocaleDateString(undefined, { month: "long", year: "numeric" }),
    );
    expect(dateGroup("not a date", now)).toBe("Older");
  });
  it("puts one heading before the first row of each group", () => {
    const rows = withGroups(
      [
        { updated_at: new Date(2026, 10, 30, 8).toISOString() },
        { updated_at: new Date(2026, 10, 30, 7).toISOString() },
        { updated_at: new Date(2026, 10, 29, 7).toISOString() },
      ],
      now,
    );
    expect(rows.map((r) => (r.kind === "group" ? r.label : "item"))).toEqual([
      "Today",
      "item",
      "item",
      "Yesterday",
      "item",
    ]);
  });
});
