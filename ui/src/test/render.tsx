import { render as rtlRender, type RenderOptions } from "@testing-library/react";
import type { ReactElement, ReactNode } from "react";
import { EngineEventsProvider } from "../ipc/EngineEventsProvider";
import { McpStatusHistoryProvider } from "../screens/tools/mcp/statusHistory";

/** The app root's providers of engine events and what is recorded from them. */
function AppRoot({ children }: { children: ReactNode }) {
  return (
    <EngineEventsProvider>
      <McpStatusHistoryProvider>{children}</McpStatusHistoryProvider>
    </EngineEventsProvider>
  );
}

/** Testing Library's render, inside the app root's engine-event providers (as in the app). */
export function render(ui: ReactElement, options?: Omit<RenderOptions, "wrapper">) {
  return rtlRender(ui, { ...options, wrapper: AppRoot });
}
