import type { ReactNode } from "react";
import { ShowFile } from "../components/ShowFile";
import { ExternalChangeBanner } from "./ExternalChangeBanner";
import type { useFileEditor } from "./useFileEditor";

/**
 * What every config-file editor has around its body: the title with an "unsaved" badge, where
 * the file lives (its full path one "Show file" away, as on the agents screen: long and rarely
 * needed), Save (also Ctrl/⌘+S) and Close, the outside-change banner, and the save error or
 * notice. `kind` names the test ids (`save-tool`, `save-agent`, …).
 */
export function FileEditorFrame(props: {
  kind: "tool" | "agent";
  title: string;
  file: ReturnType<typeof useFileEditor>;
  canSave: boolean;
  onSave: () => void;
  onClose: () => void;
  className?: string;
  /** More buttons in the header, before Save. */
  actions?: ReactNode;
  children: ReactNode;
}) {
  const { file, kind } = props;
  const save = () => {
    if (props.canSave && !file.saving && file.dirty) props.onSave();
  };
  return (
    <section
      className={`file-editor ${props.className ?? ""}`}
      aria-label={`Edit ${kind} ${props.title}`}
      data-testid={`${kind}-editor`}
      onKeyDown={(e) => {
        if ((e.ctrlKey || e.metaKey) && e.key.toLowerCase() === "s") {
          e.preventDefault();
          save();
        }
      }}
    >
      <header className="editor-header">
        <h2>
          {props.title}
          {file.dirty && (
            <span className="badge badge-confirm" data-testid="unsaved">
              unsaved
            </span>
          )}
        </h2>
        {file.path === null ? (
          <p className="muted small">Not saved yet: saving creates a file in the {kind}s folder.</p>
        ) : (
          <ShowFile path={file.path} />
        )}
        <div className="row-actions">
          {props.actions}
          <button
            type="button"
            className="primary"
            data-testid={`save-${kind}`}
            disabled={!props.canSave || file.saving || !file.dirty}
            onClick={save}
            title="Save (Ctrl+S)"
          >
            {file.saving ? "Saving…" : "Save"}
          </button>
          <button type="button" onClick={props.onClose} data-testid="close-editor">
            Close
          </button>
        </div>
      </header>
      <ExternalChangeBanner file={file} />
      {file.saveError && (
        <p role="alert" className="field-error" data-testid="save-error">
          {file.saveError}
        </p>
      )}
      {file.notice && (
        <p role="status" className="muted small" data-testid="editor-notice">
          {file.notice}
        </p>
      )}
      {props.children}
    </section>
  );
}
