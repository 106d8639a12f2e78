import {
  createContext,
  useCallback,
  useContext,
  useEffect,
  useRef,
  useState,
  type ReactNode,
  type RefObject,
} from "react";
import { Modal } from "../components/Modal";
import { holdWindowClose } from "../ipc/window";

/**
 * The unsaved-changes guard: an editor registers whether it is dirty; anything that would
 * leave it (closing it, opening another file, switching screens) goes through `useConfirmLeave`,
 * which asks first when something is unsaved.
 */
type Guard = { dirty: boolean; what: string };
const guards = new Set<RefObject<Guard>>();

/** Register an editor's unsaved state for as long as it is mounted. While it is dirty,
 * closing the window asks first too. */
export function useLeaveGuard(dirty: boolean, what: string) {
  const ref = useRef<Guard>({ dirty, what });
  const confirmLeave = useConfirmLeave();
  useEffect(() => {
    if (!dirty) return;
    return holdWindowClose((close) => confirmLeave(close));
  }, [dirty, confirmLeave]);
  useEffect(() => {
    ref.current = { dirty, what };
  }, [dirty, what]);
  useEffect(() => {
    guards.add(ref);
    return () => {
      guards.delete(ref);
    };
  }, []);
}

function unsaved(): string | null {
  for (const g of guards) if (g.current.dirty) return g.current.what;
  return null;
}

type ConfirmLeave = (action: () => void) => void;
const LeaveContext = createContext<ConfirmLeave>((action) => action());

/** Run `action` now, or after the user agrees to discard unsaved changes. */
export const useConfirmLeave = () => useContext(LeaveContext);

export function LeaveGuardProvider({ children }: { children: ReactNode }) {
  const [asking, setAsking] = useState<{ what: string; action: () => void } | null>(null);
  const confirmLeave = useCallback<ConfirmLeave>((action) => {
    const what = unsaved();
    if (what === null) action();
    else setAsking({ what, action });
  }, []);
  return (
    <LeaveContext.Provider value={confirmLeave}>
      {children}
      {asking && (
        <LeaveDialog
          what={asking.what}
          onDiscard={() => {
            const { action } = asking;
            setAsking(null);
            action();
          }}
          onStay={() => setAsking(null)}
        />
      )}
    </LeaveContext.Provider>
  );
}

function LeaveDialog(props: { what: string; onDiscard: () => void; onStay: () => void }) {
  return (
    <Modal
      open
      className="leave-dialog"
      role="alertdialog"
      aria-labelledby="leave-title"
      data-testid="leave-dialog"
      onEscape={props.onStay}
    >
      <h2 id="leave-title">Discard unsaved changes?</h2>
      <p>{props.what} has changes that are not saved. If you leave now, they are lost.</p>
      <div className="dialog-actions">
        <button type="button" autoFocus onClick={props.onStay}>
          Keep editing
        </button>
        <button type="button" className="danger" onClick={props.onDiscard}>
          Discard changes
        </button>
      </div>
    </Modal>
  );
}
