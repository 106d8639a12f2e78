import { render as rtlRender, type RenderOptions } from "@testing-library/react";
import type { ReactElement, ReactNode } from "react";
import { EngineEventsProvider } from "../ipc/EngineEventsProvider";
import { SharedDataProvider } from "../ipc/shared";
import { McpStatusHistoryProvider } from "../screens/tools/mcp/statusHistory";

/** The app root's providers of engine events, what is recorded from them, and the shared
 * answers (agents, settings). */
function AppRoot({ children }: { children: ReactNode }) {
  return (
    <EngineEventsProvider>
      <SharedDataProvider>
        <McpStatusHistoryProvider>{children}</McpStatusHistoryProvider>
      </SharedDataProvider>
    </EngineEventsProvider>
  );
}

/** Testing Library's render, inside the app root's engine-event providers (as in the app). */
export function render(ui: ReactElement, options?: Omit<RenderOptions, "wrapper">) {
  return rtlRender(ui, { ...options, wrapper: AppRoot });
}
