import type { ReactNode } from "react";
import { Icon, type IconName } from "./Icon";

export type ScreenId = "chat" | "agents" | "tools" | "skills" | "artifacts" | "models" | "settings";

export const SCREENS: readonly { id: ScreenId & IconName; label: string }[] = [
  { id: "chat", label: "Chat" },
  { id: "agents", label: "Agents" },
  { id: "tools", label: "Tools" },
  { id: "skills", label: "Skills" },
  { id: "artifacts", label: "Artifacts" },
  { id: "models", label: "Models" },
  { id: "settings", label: "Settings" },
];

const isMac = typeof navigator !== "undefined" && /Mac/i.test(navigator.platform);

export function Sidebar(props: {
  current: ScreenId;
  onSelect: (id: ScreenId) => void;
  /** Narrowed to its icons, with the chat's conversation list hidden (see useCollapsed). */
  collapsed?: boolean;
  onToggleCollapsed?: () => void;
  children?: ReactNode;
}) {
  return (
    <aside className="sidebar" id="sidebar">
      <div className="brand">
        <span aria-hidden="true" className="brand-name">
          <span className="brand-mark">◆</span> <span className="nav-label">ArtifactFlow</span>
        </span>
        {props.onToggleCollapsed && (
          <button
            type="button"
            className="sidebar-toggle"
            data-testid="sidebar-toggle"
            aria-label={
              props.collapsed
                ? "Show the sidebar and conversation list"
                : "Hide the sidebar and conversation list"
            }
            title={props.collapsed ? "Show sidebar" : "Hide sidebar"}
            aria-expanded={!props.collapsed}
            aria-controls="sidebar"
            onClick={props.onToggleCollapsed}
          >
            <Icon name="panel" />
          </button>
        )}
      </div>
      <nav aria-label="Main">
        <ul className="nav-list">
          {SCREENS.map((s, i) => (
            <li key={s.id}>
              <button
                type="button"
                className="nav-item"
                data-testid={`nav-${s.id}`}
                aria-current={props.current === s.id ? "page" : undefined}
                title={`${s.label} (${isMac ? "⌘" : "Ctrl+"}${i + 1})`}
                onClick={() => props.onSelect(s.id)}
              >
                <Icon name={s.id} />
                <span className="nav-label">{s.label}</span>
              </button>
            </li>
          ))}
        </ul>
      </nav>
      <div className="sidebar-footer">{props.children}</div>
    </aside>
  );
}
