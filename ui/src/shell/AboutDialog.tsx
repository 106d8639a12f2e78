import { useRef, useState, type FormEvent } from "react";
import { commands, type AppInfo, type ProjectLink } from "../bindings";
import { Modal } from "../components/Modal";
import { attempt, call, errorMessage } from "../ipc/call";
import { Field } from "../components/Field";
import { Spinner } from "../components/Spinner";
import { Icon } from "./Icon";
import { useAbout, type AboutState } from "./useAbout";

/**
 * The sidebar's "About" entry and its dialog: name, version, license and links, the update
 * feed setting, and "Check for updates". A modal <dialog>: focus moves into it, Escape or
 * Close closes it, and focus returns to the About button.
 */
export function About({ onShowShortcuts }: { onShowShortcuts?: () => void } = {}) {
  const [open, setOpen] = useState(false);
  const button = useRef<HTMLButtonElement>(null);
  return (
    <>
      <button
        ref={button}
        type="button"
        className="nav-item about-button"
        data-testid="about-open"
        aria-haspopup="dialog"
        onClick={() => setOpen(true)}
      >
        <Icon name="about" />
        <span className="nav-label">About</span>
      </button>
      <AboutDialog
        open={open}
        onClose={() => {
          setOpen(false);
          button.current?.focus();
        }}
        onShowShortcuts={
          onShowShortcuts &&
          (() => {
            setOpen(false);
            onShowShortcuts();
          })
        }
      />
    </>
  );
}

const LINKS: { link: ProjectLink; label: string }[] = [
  { link: "homepage", label: "Website" },
  { link: "releases", label: "Releases" },
  { link: "issues", label: "Report a problem" },
];

export function AboutDialog(props: {
  open: boolean;
  onClose: () => void;
  /** Shown as a "Keyboard shortcuts" link when given. */
  onShowShortcuts?: (() => void) | undefined;
}) {
  const close = useRef<HTMLButtonElement>(null);
  const about = useAbout(props.open);
  const [linkError, setLinkError] = useState<string | null>(null);

  const openLink = (link: ProjectLink) => {
    setLinkError(null);
    call(commands.openProjectLink(link)).catch((e: unknown) => setLinkError(errorMessage(e)));
  };

  const info = about.info;
  return (
    <Modal
      open={props.open}
      initialFocus={close}
      className="permission-dialog about-dialog"
      aria-labelledby="about-title"
      data-testid="about-dialog"
      onEscape={props.onClose}
    >
      {props.open && (
        <>
          <h2 id="about-title">About {info?.name ?? "ArtifactFlow"}</h2>
          {about.loadError && (
            <p role="alert" className="field-error">
              {about.loadError}
            </p>
          )}
          {info && (
            <>
              <dl className="about-facts">
                <dt>Version</dt>
                <dd data-testid="about-version">{info.version}</dd>
                <dt>License</dt>
                <dd>{info.license}</dd>
                <dt>Tauri</dt>
                <dd>{info.tauri_version}</dd>
                <dt>Identifier</dt>
                <dd>
                  <code>{info.identifier}</code>
                </dd>
              </dl>
              <ul className="about-links">
                {LINKS.map((l) => (
                  <li key={l.link}>
                    <button type="button" className="link-button" onClick={() => openLink(l.link)}>
                      {l.label}
                    </button>
                  </li>
                ))}
                {props.onShowShortcuts && (
                  <li>
                    <button
                      type="button"
                      className="link-button"
                      onClick={props.onShowShortcuts}
                      data-testid="about-shortcuts"
                    >
                      Keyboard shortcuts
                    </button>
                  </li>
                )}
              </ul>
              {linkError && (
                <p role="alert" className="field-error">
                  {linkError}
                </p>
              )}
              <UpdatesSection info={info} about={about} />
            </>
          )}
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

function UpdatesSection({ info, about }: { info: AppInfo; about: AboutState }) {
  const [url, setUrl] = useState(info.update_url ?? "");
  const unchanged = url.trim() === (info.update_url ?? "");
  const busy = about.update.kind === "checking" || about.update.kind === "installing";
  const submit = (e: FormEvent) => {
    e.preventDefault();
    void about.saveUpdateUrl(url);
  };
  const u = about.update;
  return (
    <section aria-labelledby="updates-title" className="about-updates">
      <h3 id="updates-title">Updates</h3>
      <form className="inline-form" onSubmit={submit} noValidate>
        <Field
          label="Update feed URL"
          hint="The release feed (latest.json) to check. Leave it empty to turn update checks off."
          error={about.saveError ?? undefined}
        >
          {(c) => (
            <div className="input-row">
              <input
                {...c}
                type="url"
                placeholder="https://…/latest.json"
                spellCheck={false}
                value={url}
                disabled={about.saving}
                onChange={(e) => {
                  setUrl(e.target.value);
                  about.clearSaveState();
                }}
              />
              <button type="submit" disabled={about.saving || unchanged}>
                {about.saving && <Spinner />}
                {about.saving ? "Saving…" : "Save"}
              </button>
            </div>
          )}
        </Field>
      </form>
      <div className="input-row">
        <button
          type="button"
          className="primary"
          disabled={!info.update_url || busy}
          onClick={() => void about.check()}
        >
          {u.kind === "checking" && <Spinner />}
          {u.kind === "checking" ? "Checking…" : "Check for updates"}
        </button>
        <span role="status" className="saved-note" data-testid="update-status">
          {!info.update_url && "Update checks are off: no update feed is set."}
          {info.update_url && about.saved && u.kind === "idle" && "Saved."}
          {u.kind === "installing" && "Downloading and installing… the app restarts when done."}
          {u.kind === "result" &&
            !u.check.available &&
            `ArtifactFlow ${u.check.current_version} is up to date.`}
          {u.kind === "result" &&
            u.check.available &&
            `Version ${u.check.available.version} is available (you have ${u.check.current_version}).`}
        </span>
      </div>
      {u.kind === "error" && (
        <p role="alert" className="field-error">
          {u.message}
        </p>
      )}
      {u.kind === "result" && u.check.available && (
        <div className="about-update-found">
          {u.check.available.date && <p className="muted">Published {u.check.available.date}</p>}
          {u.check.available.notes && <pre className="code">{u.check.available.notes}</pre>}
          {info.can_install_updates ? (
            <button type="button" className="primary" onClick={() => void about.install()}>
              Install and restart
            </button>
          ) : (
            <p className="muted">
              This build cannot install updates itself: download the new version from the{" "}
              <button
                type="button"
                className="link-button"
                onClick={() => void attempt(commands.openProjectLink("releases"))}
              >
                releases page
              </button>
              .
            </p>
          )}
        </div>
      )}
    </section>
  );
}
