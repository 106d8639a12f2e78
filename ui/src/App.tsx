import { useCallback, useEffect, useState } from "react";
import { LeaveGuardProvider, useConfirmLeave } from "./shell/leaveGuard";
import { AgentsScreen } from "./screens/agents/AgentsScreen";
import { Sidebar, SCREENS, type ScreenId } from "./shell/Sidebar";
import { StatusArea } from "./shell/StatusArea";
import { EngineEventsProvider } from "./ipc/EngineEventsProvider";
import { useStatus } from "./ipc/useStatus";
import { useTheme } from "./theme/useTheme";
import { ChatScreen } from "./screens/chat/ChatScreen";
import { ChatStoreProvider } from "./screens/chat/ChatStoreProvider";
import { ToolsScreen } from "./screens/tools/ToolsScreen";
import { ArtifactsScreen } from "./screens/artifacts/ArtifactsScreen";
import { SettingsScreen } from "./screens/settings/SettingsScreen";
import { PermissionDialog } from "./shell/PermissionDialog";
import { usePermissions } from "./shell/usePermissions";
import { ElicitationDialog } from "./shell/ElicitationDialog";
import { useElicitations } from "./shell/useElicitations";
import { commands } from "./bindings";
import { call } from "./ipc/call";
import { FirstRunSetup } from "./screens/settings/FirstRunSetup";
import { useFirstRun } from "./shell/useFirstRun";
import { About } from "./shell/AboutDialog";
import { ExternalLinks } from "./shell/externalLinks";

export function App() {
  return (
    <EngineEventsProvider>
      <LeaveGuardProvider>
        <ChatStoreProvider>
          <Shell />
        </ChatStoreProvider>
      </LeaveGuardProvider>
    </EngineEventsProvider>
  );
}

function Shell() {
  const [screen, setScreenNow] = useState<ScreenId>("chat");
  const confirmLeave = useConfirmLeave();
  // The conversation the chat shows: kept while other screens are open, and set by the
  // library's "Open conversation" (which also remounts the chat, through `opened`).
  const [chatTarget, setChatTarget] = useState<{ id: string | null; opened: number }>({
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
  const [theme, setTheme] = useTheme();
  const status = useStatus();
  const permissions = usePermissions();
  const elicitations = useElicitations();
  const firstRun = useFirstRun();

  // Ctrl/Cmd + 1..4 switches screens.
  useEffect(() => {
    const onKey = (e: KeyboardEvent) => {
      if (!(e.ctrlKey || e.metaKey) || e.altKey || e.shiftKey) return;
      const index = Number.parseInt(e.key, 10) - 1;
      const target = SCREENS[index];
      if (target) {
        e.preventDefault();
        setScreen(target.id);
      }
    };
    window.addEventListener("keydown", onKey);
    return () => window.removeEventListener("keydown", onKey);
  }, [setScreen]);

  return (
    <div className="app">
      <Sidebar current={screen} onSelect={setScreen}>
        <About />
        <StatusArea state={status} />
      </Sidebar>
      <main className="content" aria-labelledby="screen-title">
        {/* The setup stands in for the chat only: the other screens (Tools, Settings, …) show
            alone, and Chat shows the setup again until it is finished or skipped. */}
        {firstRun.show && screen === "chat" && <FirstRunSetup onDone={firstRun.done} />}
        {!firstRun.show && screen === "chat" && (
          <ChatScreen
            key={chatTarget.opened}
            conversation={chatTarget.id}
            onCurrentChange={onChatChange}
          />
        )}
        {screen === "agents" && <AgentsScreen />}
        {screen === "tools" && <ToolsScreen state={status} />}
        {screen === "artifacts" && (
          <ArtifactsScreen
            onOpenConversation={(id) => {
              confirmLeave(() => {
                setChatTarget((t) => ({ id, opened: t.opened + 1 }));
                setScreenNow("chat");
              });
            }}
          />
        )}
        {screen === "settings" && (
          <SettingsScreen theme={theme} onThemeChange={setTheme} state={status} />
        )}
      </main>
      <ExternalLinks />
      <PermissionDialog
        queue={permissions.queue}
        onAnswer={(id, answer) => void permissions.answer(id, answer)}
      />
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
