import { render as rtlRender, type RenderOptions } from "@testing-library/react";
import type { ReactElement } from "react";
import { EngineEventsProvider } from "../ipc/EngineEventsProvider";

/** Testing Library's render, inside the app root's engine-event provider (as in the app). */
export function render(ui: ReactElement, options?: Omit<RenderOptions, "wrapper">) {
  return rtlRender(ui, { ...options, wrapper: EngineEventsProvider });
}
