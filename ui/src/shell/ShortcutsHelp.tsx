import { useRef } from "react";
import { Modal } from "../components/Modal";
import { SCREENS } from "./Sidebar";

export const isMac = typeof navigator !== "undefined" && /Mac/i.test(navigator.platform);
/** The modifier of the app's shortcuts as the platform writes it. */
export const MOD = isMac ? "⌘" : "Ctrl+";

/** Every keyboard shortcut of the app, for the help sheet. */
export const SHORTCUTS: readonly { keys: string; what: string }[] = [
  { keys: `${MOD}N`, what: "New conversation" },
  { keys: `${MOD}K`, what: "Command palette: screens, conversations, tools, artifacts, agents" },
  ...SCREENS.map((s, i) => ({ keys: `${MOD}${i + 1}`, what: `Go to ${s.label}` })),
  { keys: `${MOD}/ or ?`, what: "This list of shortcuts" },
  { keys: "Enter", what: "Send the message (Shift+Enter for a new line)" },
  { keys: "Esc", what: "Close a dialog, menu or the palette" },
  { keys: "↑ ↓ Enter", what: "Move and choose in the palette and in menus" },
];

/** The help sheet listing [`SHORTCUTS`] (Ctrl/Cmd+/, "?", the palette or About). */
export function ShortcutsHelp(props: { open: boolean; onClose: () => void }) {
  const close = useRef<HTMLButtonElement>(null);
  return (
    <Modal
      open={props.open}
      initialFocus={close}
      className="permission-dialog shortcuts-help"
      aria-labelledby="shortcuts-title"
      data-testid="shortcuts-help"
      onEscape={props.onClose}
    >
      {props.open && (
        <>
          <h2 id="shortcuts-title">Keyboard shortcuts</h2>
          <table className="shortcuts">
            <tbody>
              {SHORTCUTS.map((s) => (
                <tr key={s.keys}>
                  <th scope="row">
                    <kbd>{s.keys}</kbd>
                  </th>
                  <td>{s.what}</td>
                </tr>
              ))}
            </tbody>
          </table>
          <div className="dialog-actions">
            <button ref={close} type="button" onClick={props.onClose}>
              Close
            </button>
          </div>
        </>
      )}
    </Modal>
  );
}
