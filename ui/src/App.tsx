import { lazy, Suspense, useCallback, useEffect, useMemo, useRef, useState } from "react";
import { LeaveGuardProvider, useConfirmLeave } from "./shell/leaveGuard";
import { Sidebar, SCREENS, type ScreenId } from "./shell/Sidebar";
import { StatusArea, failedServers } from "./shell/StatusArea";
import { useMcpServers } from "./screens/tools/mcp/useMcpServers";
import { EngineEventsProvider } from "./ipc/EngineEventsProvider";
import { SharedDataProvider } from "./ipc/shared";
import { useStatus } from "./ipc/useStatus";
import { useTheme } from "./theme/useTheme";
import { ChatScreen } from "./screens/chat/ChatScreen";
import { ChatStoreProvider } from "./screens/chat/ChatStoreProvider";
import { McpStatusHistoryProvider } from "./screens/tools/mcp/statusHistory";
import { PermissionDialog } from "./shell/PermissionDialog";
import { usePermissions } from "./shell/usePermissions";
import { ElicitationDialog } from "./shell/ElicitationDialog";
import { useElicitations } from "./shell/useElicitations";
import { commands, type ArtifactSummary } from "./bindings";
import { call } from "./ipc/call";
import { useFirstRun } from "./shell/useFirstRun";
import { About } from "./shell/AboutDialog";
import { ExternalLinks } from "./shell/externalLinks";
import { CommandPalette, type PaletteActions } from "./shell/CommandPalette";
import { ShortcutsHelp } from "./shell/ShortcutsHelp";
import { useCollapsed } from "./shell/useLayout";
import { focusWhenShown, isTyping } from "./shell/focus";
import { hideSplash } from "./shell/splash";
import { loadMarkdown } from "./components/markdownLoader";

// Screens other than the chat load when first opened (their code, and libraries such as the
// YAML parser, the diff and the editors, stay out of the startup bundle the window parses).
const AgentsScreen = lazy(() =>
  import("./screens/agents/AgentsScreen").then((m) => ({ default: m.AgentsScreen })),
);
const ToolsScreen = lazy(() =>
  import("./screens/tools/ToolsScreen").then((m) => ({ default: m.ToolsScreen })),
);
const SkillsScreen = lazy(() =>
  import("./screens/skills/SkillsScreen").then((m) => ({ default: m.SkillsScreen })),
);
const ArtifactsScreen = lazy(() =>
  import("./screens/artifacts/ArtifactsScreen").then((m) => ({ default: m.ArtifactsScreen })),
);
const ModelsScreen = lazy(() =>
  import("./screens/models/ModelsScreen").then((m) => ({ default: m.ModelsScreen })),
);
const SettingsScreen = lazy(() =>
  import("./screens/settings/SettingsScreen").then((m) => ({ default: m.SettingsScreen })),
);
const FirstRunSetup = lazy(() =>
  import("./screens/settings/FirstRunSetup").then((m) => ({ default: m.FirstRunSetup })),
);

export function App() {
  // The Markdown renderer comes right after the first frame, not in the first script.
  useEffect(() => {
    loadMarkdown().catch(() => {});
  }, []);
  return (
    <EngineEventsProvider>
      <SharedDataProvider>
        <LeaveGuardProvider>
          <ChatStoreProvider>
            <McpStatusHistoryProvider>
              <Shell />
            </McpStatusHistoryProvider>
          </ChatStoreProvider>
        </LeaveGuardProvider>
      </SharedDataProvider>
    </EngineEventsProvider>
  );
}

function Shell() {
  const [screen, setScreenNow] = useState<ScreenId>("chat");
  const confirmLeave = useConfirmLeave();
  // The conversation the chat shows: kept while other screens are open, and set by the
  // library's "Open conversation" (which also remounts the chat, through `opened`).
  // `agent` starts a new conversation with that agent (the palette's "Run agent").
  const [chatTarget, setChatTarget] = useState<{
    id: string | null;
    opened: number;
    agent?: string | undefined;
  }>({
    id: null,
    opened: 0,
  });
  const onChatChange = useCallback(
    (id: string | null) => setChatTarget((t) => (t.id === id ? t : { ...t, id })),
    [],
  );
  const setScreen = useCallback(
    (next: ScreenId) => confirmLeave(() => setScreenNow(next)),
    [confirmLeave],
  );
  /** A screen chosen with Ctrl+1…7 or the palette: the focus goes to its heading (a screen
   * reader announces it, and Tab continues from there), never left on the page's body. */
  const [titleFocus, setTitleFocus] = useState(0);
  const goToScreen = useCallback(
    (next: ScreenId) =>
      confirmLeave(() => {
        setScreenNow(next);
        setTitleFocus((n) => n + 1);
      }),
    [confirmLeave],
  );
  // Once the screen has changed (the old heading is gone), whenever the new one shows.
  useEffect(() => {
    if (titleFocus > 0) focusWhenShown("#screen-title, #first-run-title");
  }, [titleFocus]);
  const [theme, setTheme] = useTheme();
  const status = useStatus();
  const mcp = useMcpServers();
  const permissions = usePermissions();
  const elicitations = useElicitations();
  const firstRun = useFirstRun();
  // The starting splash stays until the first screen is the one that stays: on a first run
  // the setup takes the chat's place once the settings answer.
  useEffect(() => {
    if (firstRun.decided) hideSplash();
  }, [firstRun.decided]);
  const [collapsed, toggleCollapsed] = useCollapsed();
  const [palette, setPalette] = useState(false);
  const [help, setHelp] = useState(false);
  // Where the focus was when the palette or the shortcuts sheet opened: it goes back there.
  const openedFrom = useRef<HTMLElement | null>(null);
  const openOverlay = useCallback((show: (open: boolean) => void) => {
    openedFrom.current =
      document.activeElement instanceof HTMLElement ? document.activeElement : null;
    show(true);
  }, []);
  const closeOverlay = useCallback((show: (open: boolean) => void) => {
    show(false);
    openedFrom.current?.focus();
  }, []);
  // The artifact the palette opened in the library (a new one remounts the library on it).
  // The agent file Settings' "Open in editor" asked for (a new request remounts the screen on it).
  const [agentFile, setAgentFile] = useState<{ path: string | null; n: number }>({
    path: null,
    n: 0,
  });
  const [artifact, setArtifact] = useState<{ open: ArtifactSummary | null; n: number }>({
    open: null,
    n: 0,
  });

  /** Show the chat on conversation `id` (null: a new one, with `agent` when given). */
  const openChat = useCallback(
    (id: string | null, agent?: string) =>
      confirmLeave(() => {
        setChatTarget((t) => ({ id, opened: t.opened + 1, agent }));
        setScreenNow("chat");
        if (id === null) focusWhenShown('[data-testid="composer-input"]');
      }),
    [confirmLeave],
  );

  const actions: PaletteActions = useMemo(
    () => ({
      goTo: goToScreen,
      newConversation: (agent) => openChat(null, agent),
      openConversation: (id) => openChat(id),
      openTool: (name) =>
        confirmLeave(() => {
          setScreenNow("tools");
          focusWhenShown(`[data-testid="tool-row-${CSS.escape(name)}"]`);
        }),
      openArtifact: (a) =>
        confirmLeave(() => {
          setArtifact((x) => ({ open: a, n: x.n + 1 }));
          setScreenNow("artifacts");
        }),
      showShortcuts: () => setHelp(true),
    }),
    [confirmLeave, openChat, goToScreen],
  );

  // Ctrl/Cmd + 1..7 switches screens, + N starts a conversation, + K opens the palette,
  // + / (or "?" outside a text field) lists the shortcuts. Not while a dialog is open.
  useEffect(() => {
    const onKey = (e: KeyboardEvent) => {
      if (document.querySelector("dialog[open]")) return;
      const mod = (e.ctrlKey || e.metaKey) && !e.altKey;
      if (e.key === "?" && !mod && !isTyping(e.target)) {
        e.preventDefault();
        openOverlay(setHelp);
        return;
      }
      if (!mod) return;
      const key = e.key.toLowerCase();
      if (key === "/" && !e.shiftKey) {
        e.preventDefault();
        openOverlay(setHelp);
        return;
      }
      if (e.shiftKey) return;
      if (key === "k") {
        e.preventDefault();
        openOverlay(setPalette);
        return;
      }
      if (key === "n") {
        e.preventDefault();
        if (!firstRun.show) openChat(null);
        return;
      }
      const index = Number.parseInt(e.key, 10) - 1;
      const target = SCREENS[index];
      if (target) {
        e.preventDefault();
        goToScreen(target.id);
      }
    };
    window.addEventListener("keydown", onKey);
    return () => window.removeEventListener("keydown", onKey);
  }, [goToScreen, openChat, openOverlay, firstRun.show]);

  return (
    <div className={collapsed ? "app collapsed" : "app"}>
      <Sidebar
        current={screen}
        onSelect={setScreen}
        collapsed={collapsed}
        onToggleCollapsed={toggleCollapsed}
      >
        <About onShowShortcuts={() => setHelp(true)} />
        <StatusArea
          state={status}
          failed={failedServers(mcp.servers)}
          onShowTools={() => setScreen("tools")}
        />
      </Sidebar>
      <main className="content" aria-labelledby="screen-title">
        {/* The chat stays mounted while another screen shows, out of sight: the live views of
            its tool cards (MCP Apps frames) keep their state, its scroll and its draft stay.
            The other screens mount when shown. */}
        {!firstRun.show && (
          <ChatScreen
            key={chatTarget.opened}
            shown={screen === "chat"}
            conversation={chatTarget.id}
            agent={chatTarget.agent}
            onCurrentChange={onChatChange}
          />
        )}
        <Suspense fallback={<p role="status">Loading…</p>}>
          {/* The setup stands in for the chat only: the other screens (Tools, Settings, …) show
              alone, and Chat shows the setup again until it is finished or skipped. */}
          {firstRun.show && screen === "chat" && <FirstRunSetup onDone={firstRun.done} />}
          {screen === "agents" && <AgentsScreen key={agentFile.n} openPath={agentFile.path} />}
          {screen === "tools" && <ToolsScreen state={status} />}
          {screen === "skills" && <SkillsScreen />}
          {screen === "artifacts" && (
            <ArtifactsScreen
              key={artifact.n}
              open={artifact.open}
              onOpenConversation={(id) => {
                confirmLeave(() => {
                  setChatTarget((t) => ({ id, opened: t.opened + 1 }));
                  setScreenNow("chat");
                });
              }}
            />
          )}
          {screen === "models" && <ModelsScreen />}
          {screen === "settings" && (
            <SettingsScreen
              theme={theme}
              onThemeChange={setTheme}
              state={status}
              onOpenModels={() => goToScreen("models")}
              onOpenAgentFile={(path) =>
                confirmLeave(() => {
                  setAgentFile((a) => ({ path, n: a.n + 1 }));
                  setScreenNow("agents");
                })
              }
            />
          )}
        </Suspense>
      </main>
      <ExternalLinks />
      <CommandPalette open={palette} onClose={() => closeOverlay(setPalette)} actions={actions} />
      <ShortcutsHelp open={help} onClose={() => closeOverlay(setHelp)} />
      <PermissionDialog queue={permissions.queue} onAnswer={permissions.answer} />
      <ElicitationDialog
        queue={elicitations.queue}
        onAnswer={elicitations.answer}
        onOpenUrl={async (url) => {
          await call(commands.openExternal(url));
        }}
      />
    </div>
  );
}
