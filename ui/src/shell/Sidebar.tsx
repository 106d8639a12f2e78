import type { ReactNode } from "react";
import { Icon, type IconName } from "./Icon";

export type ScreenId = "chat" | "agents" | "tools" | "artifacts" | "settings";

export const SCREENS: readonly { id: ScreenId & IconName; label: string }[] = [
  { id: "chat", label: "Chat" },
  { id: "agents", label: "Agents" },
  { id: "tools", label: "Tools" },
  { id: "artifacts", label: "Artifacts" },
  { id: "settings", label: "Settings" },
];

const isMac = typeof navigator !== "undefined" && /Mac/i.test(navigator.platform);

export function Sidebar(props: {
  current: ScreenId;
  onSelect: (id: ScreenId) => void;
  children?: ReactNode;
}) {
  return (
    <aside className="sidebar">
      <div className="brand" aria-hidden="true">
        <span className="brand-mark">◆</span> ArtifactFlow
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
                {s.label}
              </button>
            </li>
          ))}
        </ul>
      </nav>
      <div className="sidebar-footer">{props.children}</div>
    </aside>
  );
}
