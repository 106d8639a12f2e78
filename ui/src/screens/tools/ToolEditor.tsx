import { useEffect, useMemo, useRef, useState } from "react";
import { commands, type ConfigError } from "../../bindings";
import { call } from "../../ipc/call";
import { useFileEditor } from "../../editor/useFileEditor";
import { FileEditorFrame } from "../../editor/FileEditorFrame";
import { ProblemList } from "../../editor/ProblemList";
import { selectLine } from "../../editor/selectLine";
import { useLeaveGuard } from "../../shell/leaveGuard";
import { draftTestParams, TestPanel } from "./TestPanel";
import { ToolForm } from "./ToolForm";
import { applyDraft, parseToolMarkdown, type ToolDraft } from "./toolDraft";
import { useToolCheck } from "./useToolCheck";

type Tab = "form" | "markdown";

/**
 * The HTTP tool editor: a form and the raw Markdown file (tabs, kept in sync both ways),
 * checked live by the backend's own loader, with the instruction preview, the `{{VAR}}`
 * secrets it needs, and a test panel. Ctrl/Cmd+S saves.
 */
export function ToolEditor(props: {
  opened: { path: string | null; text: string };
  onClose: () => void;
  onSaved?: (path: string) => void;
}) {
  const file = useFileEditor("tool", props.opened);
  const [tab, setTab] = useState<Tab>("form");
  const parsed = useMemo(() => parseToolMarkdown(file.text), [file.text]);
  // The form's own draft, so typing is never fought by re-parsing; re-read from the text when
  // the raw Markdown (or the disk) changes it.
  const [draft, setDraft] = useState<ToolDraft | null>(parsed.ok ? parsed.draft : null);
  const formText = useRef(file.text);
  useEffect(() => {
    if (file.text !== formText.current && parsed.ok) {
      formText.current = file.text;
      setDraft(parsed.draft);
    }
  }, [file.text, parsed]);
  const check = useToolCheck(file.path, file.text);
  const errors: ConfigError[] = useMemo(() => {
    if (!parsed.ok)
      return [{ file: file.path ?? "", line: parsed.line, field: null, message: parsed.error }];
    return check?.errors ?? [];
  }, [parsed, check, file.path]);
  const title = check?.name ?? draft?.name ?? "New tool";
  useLeaveGuard(file.dirty, `The tool “${title}”`);
  const raw = useRef<HTMLTextAreaElement>(null);

  const onForm = (next: ToolDraft) => {
    setDraft(next);
    const text = applyDraft(file.text, next);
    formText.current = text;
    file.setText(text);
  };

  const save = async () => {
    const saved = await file.save();
    if (saved) props.onSaved?.(saved.path);
  };

  const goToLine = (line: number | null) => {
    setTab("markdown");
    window.setTimeout(() => selectLine(raw.current, line), 0);
  };

  return (
    <FileEditorFrame
      kind="tool"
      title={title}
      file={file}
      canSave={errors.length === 0}
      onSave={() => void save()}
      onClose={props.onClose}
      className="tool-editor"
    >
      <div className="editor-columns">
        <div className="editor-main">
          <div className="segmented" role="tablist" aria-label="View">
            {(["form", "markdown"] as const).map((t) => (
              <button
                key={t}
                type="button"
                role="tab"
                className="segment"
                aria-selected={tab === t}
                data-testid={`tab-${t}`}
                onClick={() => setTab(t)}
              >
                {t === "form" ? "Form" : "Markdown"}
              </button>
            ))}
          </div>
          {tab === "form" &&
            (draft && parsed.ok ? (
              <ToolForm draft={draft} errors={errors} onChange={onForm} />
            ) : (
              <p role="alert" className="field-error">
                The Markdown does not parse, so the form cannot show it:{" "}
                {parsed.ok ? "" : parsed.error}{" "}
                <button type="button" className="link-button" onClick={() => setTab("markdown")}>
                  Fix it in the Markdown
                </button>
              </p>
            ))}
          {tab === "markdown" && (
            <textarea
              ref={raw}
              className="raw-editor"
              aria-label="Tool file (Markdown with YAML frontmatter)"
              data-testid="tool-raw"
              spellCheck={false}
              value={file.text}
              onChange={(e) => file.setText(e.target.value)}
            />
          )}
        </div>
        <aside className="editor-side">
          <ProblemList errors={errors} checking={check === null} onGoTo={goToLine} />
          {check && check.secrets.length > 0 && (
            <section aria-labelledby="secrets-title">
              <h3 id="secrets-title">Secrets it uses</h3>
              <ul className="chip-list" data-testid="secret-refs">
                {check.secrets.map((s) => (
                  <li key={s.name} className={`tag ${s.found_in ? "tag-ok" : "tag-missing"}`}>
                    <code>{s.name}</code>{" "}
                    {s.found_in ? `set (${s.found_in})` : "missing: add it in Settings → Secrets"}
                  </li>
                ))}
              </ul>
            </section>
          )}
          {check?.instructions && (
            <details className="instructions-preview">
              <summary>What the model sees</summary>
              <pre className="code" data-testid="instructions-preview">
                {check.instructions}
              </pre>
            </details>
          )}
          <TestPanel
            params={draftTestParams(parsed.ok ? parsed.draft : null)}
            run={(params) => call(commands.testToolDraft(file.path, file.text, params))}
            disabled={errors.length > 0}
            disabledHint="Fix the problems above to test."
            subject={file.text}
          />
        </aside>
      </div>
    </FileEditorFrame>
  );
}
