import { useCallback, useEffect, useRef, useState } from "react";
import { commands, type SkillDetail, type SkillView, type SkillsView } from "../../bindings";
import { Markdown } from "../../components/Markdown";
import { Spinner } from "../../components/Spinner";
import { call, errorMessage } from "../../ipc/call";
import { useStatusChanged } from "../../ipc/useEngineEvents";
import { refocusIfLost } from "../../shell/focus";

/** Where a problem is, as `file:line: field`, shortened to the part under a skills folder. */
function where(p: { file: string; line: number | null; field: string | null }): string {
  const short = p.file.replace(/^.*?[/\\](skills|agents)[/\\]/, "$1/");
  return `${short}${p.line ? `:${p.line}` : ""}${p.field ? ` (${p.field})` : ""}`;
}

/** The skills: what the config folder (and, when turned on, other apps' folders) holds. */
export function useSkills() {
  const [view, setView] = useState<SkillsView | null>(null);
  const [error, setError] = useState<string | null>(null);
  const load = useCallback(
    () =>
      call(commands.skillsList()).then(
        (v) => {
          setView(v);
          setError(null);
        },
        (e: unknown) => setError(errorMessage(e)),
      ),
    [],
  );
  useEffect(() => {
    void load();
  }, [load]);
  // A skill saved, added or removed on disk reloads the config: the list follows.
  useStatusChanged(() => void load());
  return { view, error, reload: load };
}

/**
 * The Skills page: each skill with its source, on/off, the agents that get it and its
 * description; the skills that did not load, located; one skill opened (its SKILL.md rendered,
 * its files browsable); import from a folder or an archive; the user-level folders on or off.
 */
export function SkillsScreen() {
  const { view, error, reload } = useSkills();
  const [actionError, setActionError] = useState<string | null>(null);
  const [notice, setNotice] = useState<string | null>(null);
  const [open, setOpen] = useState<string | null>(null);

  const act = async (what: () => Promise<unknown>) => {
    setActionError(null);
    setNotice(null);
    try {
      await what();
      await reload();
    } catch (e) {
      setActionError(errorMessage(e));
    }
  };

  /** The import running (what it imports), while the dialog is open and the copy runs. */
  const [importing, setImporting] = useState<"folder" | "archive" | null>(null);
  const folderButton = useRef<HTMLButtonElement>(null);
  const archiveButton = useRef<HTMLButtonElement>(null);

  /** Import a skill the user picks: both import buttons wait (a status line says why) until it
   * is in the list, or refused with the reason. */
  const importSkill = async (archive: boolean) => {
    setImporting(archive ? "archive" : "folder");
    await act(async () => {
      const name = await call(commands.skillsImport(null, archive));
      if (name) {
        setNotice(`Imported the skill “${name}”.`);
        setOpen(name);
      }
    });
    setImporting(null);
    // The button lost the focus while disabled: give it back to the keyboard.
    refocusIfLost((archive ? archiveButton : folderButton).current);
  };

  return (
    <section className="screen skills-screen" aria-labelledby="screen-title">
      <h1 id="screen-title" tabIndex={-1}>
        Skills
      </h1>
      <p className="muted">
        Skills give agents know-how for particular tasks: a folder with a SKILL.md, as Claude and
        other apps write them. An agent sees each skill’s name and description, and loads the rest
        only when a task needs it. A skill’s scripts run only after you approve them.
      </p>
      <div className="toolbar">
        <button
          type="button"
          ref={folderButton}
          disabled={importing !== null}
          onClick={() => void importSkill(false)}
        >
          {importing === "folder" ? (
            <>
              <Spinner /> Importing…
            </>
          ) : (
            "Import a folder…"
          )}
        </button>
        <button
          type="button"
          ref={archiveButton}
          disabled={importing !== null}
          onClick={() => void importSkill(true)}
        >
          {importing === "archive" ? (
            <>
              <Spinner /> Importing…
            </>
          ) : (
            "Import a .zip or .skill file…"
          )}
        </button>
        <button type="button" onClick={() => void act(() => call(commands.openSkillsFolder()))}>
          Open the skills folder
        </button>
      </div>
      {view && (
        <label className="checkbox-row">
          <input
            type="checkbox"
            checked={view.user_folders}
            data-testid="skills-user-folders"
            onChange={(e) => {
              const on = e.currentTarget.checked;
              void act(() => call(commands.skillsSetUserFolders(on)));
            }}
          />{" "}
          Also use the skills other apps keep in {view.user_folder_paths.join(" and ")}
        </label>
      )}
      {(error ?? actionError) && (
        <p className="form-errors" role="alert">
          {error ?? actionError}
        </p>
      )}
      {(importing ?? notice) && (
        <p className="muted" role="status" data-testid="skills-import-status">
          {importing
            ? "Importing the skill: copying it into the skills folder and checking it…"
            : notice}
        </p>
      )}
      {view === null && !error && <p role="status">Loading…</p>}
      {view && view.skills.length === 0 && (
        <p className="muted" data-testid="no-skills">
          No skills yet: import one, or put a skill’s folder in {view.skills_dir}.
        </p>
      )}
      {view && view.skills.length > 0 && (
        <ul className="skill-list" data-testid="skill-list">
          {view.skills.map((s) => (
            <SkillRow
              key={s.name}
              skill={s}
              open={open === s.name}
              onOpen={() => setOpen(open === s.name ? null : s.name)}
              onEnabled={(on) => void act(() => call(commands.skillsSetEnabled(s.name, on)))}
            />
          ))}
        </ul>
      )}
      {view && view.problems.length > 0 && (
        <>
          <h2>Problems</h2>
          <ul className="skill-problems" data-testid="skill-problems">
            {view.problems.map((p) => (
              <li key={`${p.file}:${p.line}:${p.message}`}>
                <code>{where(p)}</code>: {p.message}
              </li>
            ))}
          </ul>
        </>
      )}
    </section>
  );
}

function SkillRow(props: {
  skill: SkillView;
  open: boolean;
  onOpen: () => void;
  onEnabled: (on: boolean) => void;
}) {
  const s = props.skill;
  return (
    <li className="skill-row" data-testid={`skill-${s.name}`}>
      <div className="skill-head">
        <button
          type="button"
          className="link-button skill-name"
          aria-expanded={props.open}
          onClick={props.onOpen}
        >
          {s.name}
        </button>
        <span className="badge">{s.source}</span>
        {!s.enabled && <span className="badge">off</span>}
        <label className="skill-toggle">
          <input
            type="checkbox"
            checked={s.enabled}
            aria-label={`Use the skill ${s.name}`}
            onChange={(e) => props.onEnabled(e.currentTarget.checked)}
          />{" "}
          On
        </label>
      </div>
      <p className="skill-description">{s.description}</p>
      <p className="muted small">
        {s.agents.length === 0
          ? "No agent uses it (add `skills:` to an agent)."
          : `Used by ${s.agents.join(", ")}.`}
        {s.license && ` Licence: ${s.license}.`}
        {s.compatibility && ` Compatibility: ${s.compatibility}`}
      </p>
      {props.open && <SkillDetails name={s.name} />}
    </li>
  );
}

function SkillDetails({ name }: { name: string }) {
  const [detail, setDetail] = useState<SkillDetail | null>(null);
  const [file, setFile] = useState<{ path: string; text: string } | null>(null);
  const [error, setError] = useState<string | null>(null);
  useEffect(() => {
    let live = true;
    call(commands.skillsShow(name))
      .then((d) => live && setDetail(d))
      .catch((e: unknown) => live && setError(errorMessage(e)));
    return () => {
      live = false;
    };
  }, [name]);
  const openFile = async (path: string) => {
    setError(null);
    try {
      setFile({ path, text: await call(commands.skillsReadFile(name, path)) });
    } catch (e) {
      setError(errorMessage(e));
    }
  };
  if (!detail) return error ? <p role="alert">{error}</p> : <p role="status">Loading…</p>;
  return (
    <div className="skill-details" data-testid="skill-details">
      <Markdown text={detail.instructions} className="skill-instructions" />
      <h2 className="skill-files-heading">Files</h2>
      {detail.files.length === 0 ? (
        <p className="muted small">Only its SKILL.md.</p>
      ) : (
        <ul className="skill-files">
          {detail.files.map((f) => (
            <li key={f}>
              <button type="button" className="link-button" onClick={() => void openFile(f)}>
                {f}
              </button>
            </li>
          ))}
        </ul>
      )}
      {error && (
        <p className="form-errors" role="alert">
          {error}
        </p>
      )}
      {file && (
        <figure className="skill-file" data-testid="skill-file">
          <figcaption>{file.path}</figcaption>
          <pre className="code" tabIndex={0}>
            {file.text}
          </pre>
        </figure>
      )}
    </div>
  );
}
