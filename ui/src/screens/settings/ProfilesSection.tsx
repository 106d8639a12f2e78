import { useRef, useState } from "react";
import type { ModelProfile, ProfileModel } from "../../bindings";
import { ConfirmButton } from "../../components/ConfirmButton";
import { draftFromProfile, emptyDraft } from "./profileDraft";
import { ProfileForm } from "./ProfileForm";
import { missingModelOf, missingModelText } from "./missingModel";
import { presetFor } from "./presets";
import { templateName } from "./secretNames";
import { useProfileEditor } from "./useProfileEditor";
import { useProfileList } from "./useProfileList";

/** Model profiles (models.yaml): the list, and a form to add or edit one. */
export function ProfilesSection(props: {
  profiles: readonly ModelProfile[];
  secretNames: readonly string[];
  missingSecrets: readonly string[];
  /** The model of each profile run on this computer: the file it runs, or why it has none. */
  profileModels?: readonly ProfileModel[] | undefined;
  reload: () => Promise<void>;
  /** Open the Models screen (a local profile's "Get a model…"); absent, the form has no link. */
  onOpenModels?: (() => void) | undefined;
}) {
  /** null: not editing; "new": adding; a number: editing that profile. */
  const [editing, setEditing] = useState<number | "new" | null>(null);
  const list = useProfileList(props.profiles, props.reload);
  const addRef = useRef<HTMLButtonElement>(null);

  const close = () => {
    setEditing(null);
    requestAnimationFrame(() => addRef.current?.focus());
  };

  return (
    <section className="setting-group" aria-labelledby="profiles-title">
      <h2 id="profiles-title">Model profiles</h2>
      <p className="muted">
        Saved to <code>models.yaml</code>. Agents use the profile named <code>default</code> unless
        they name another.
      </p>
      {list.error && (
        <p className="form-errors" role="alert">
          {list.error}
        </p>
      )}
      {props.profiles.length === 0 ? (
        <p className="muted" data-testid="no-profiles">
          No model profiles yet. Add one to start chatting.
        </p>
      ) : (
        <ul className="profile-list" aria-label="Model profiles">
          {props.profiles.map((p, i) => (
            <li key={`${i}:${p.name}`} className="profile-item" data-testid={`profile-${p.name}`}>
              {editing === i ? (
                <ProfileEditorPanel
                  profiles={props.profiles}
                  index={i}
                  secretNames={props.secretNames}
                  onDone={close}
                  reload={props.reload}
                  onOpenModels={props.onOpenModels}
                />
              ) : (
                <ProfileSummary
                  profile={p}
                  missingModel={missingModelOf(props.profileModels, p.name)}
                  onOpenModels={props.onOpenModels}
                  missingSecrets={props.missingSecrets}
                  busy={list.busy || editing !== null}
                  onEdit={() => setEditing(i)}
                  onDelete={() => list.remove(i)}
                />
              )}
            </li>
          ))}
        </ul>
      )}
      {editing === "new" ? (
        <div className="profile-item">
          <ProfileEditorPanel
            profiles={props.profiles}
            index={null}
            secretNames={props.secretNames}
            onDone={close}
            reload={props.reload}
            onOpenModels={props.onOpenModels}
          />
        </div>
      ) : (
        <button
          type="button"
          ref={addRef}
          className="primary"
          disabled={editing !== null || list.busy}
          onClick={() => setEditing("new")}
        >
          Add profile
        </button>
      )}
    </section>
  );
}

function ProfileSummary(props: {
  profile: ModelProfile;
  /** Its model, when it is missing (a local profile whose model was deleted…). */
  missingModel: ProfileModel | null;
  onOpenModels?: (() => void) | undefined;
  missingSecrets: readonly string[];
  busy: boolean;
  onEdit: () => void;
  onDelete: () => void | Promise<void>;
}) {
  const p = props.profile;
  const secret = templateName(p.api_key);
  const preset = presetFor(p.api, p.base_url);
  const missing = secret !== null && props.missingSecrets.includes(secret);
  return (
    <div className="profile-summary">
      <div className="profile-main">
        <div className="profile-name">
          <strong>{p.name}</strong>
          {p.name === "default" && <span className="tag">default</span>}
          <span className="muted">
            {preset?.label ??
              (p.api === "anthropic"
                ? "Anthropic API"
                : p.api === "local"
                  ? "On this computer"
                  : "OpenAI-compatible")}{" "}
            · {p.model}
            {p.tool_calls === "native" && " · native tool calls"}
          </span>
          {props.missingModel && <span className="tag tag-missing">no model</span>}
        </div>
        {props.missingModel && (
          <p className="field-error small" role="note" data-testid="profile-model-missing">
            No model to run: {missingModelText(props.missingModel, p.model)}. Chats with this
            profile cannot start until you pick another.{" "}
            <button
              type="button"
              className="link-button"
              aria-label={`Pick another model for ${p.name}`}
              onClick={props.onEdit}
              disabled={props.busy}
            >
              Pick another model
            </button>
            {props.onOpenModels && (
              <>
                {" "}
                <button type="button" className="link-button" onClick={props.onOpenModels}>
                  Get a model…
                </button>
              </>
            )}
          </p>
        )}
        <div className="profile-details">
          <code>{p.base_url}</code>
          {secret !== null ? (
            <span className={missing ? "tag tag-missing" : "tag tag-ok"}>
              key {secret}
              {missing ? " — not set" : ""}
            </span>
          ) : (
            <span className="tag">no key</span>
          )}
        </div>
      </div>
      <div className="row-actions">
        <button
          type="button"
          onClick={props.onEdit}
          disabled={props.busy}
          aria-label={`Edit ${p.name}`}
        >
          Edit
        </button>
        <ConfirmButton
          label={`Delete ${p.name}`}
          question={
            <>
              Delete <strong>{p.name}</strong>?
            </>
          }
          confirmLabel="Delete"
          disabled={props.busy}
          onConfirm={props.onDelete}
        >
          Delete
        </ConfirmButton>
      </div>
    </div>
  );
}

function ProfileEditorPanel(props: {
  profiles: readonly ModelProfile[];
  index: number | null;
  secretNames: readonly string[];
  onDone: () => void;
  reload: () => Promise<void>;
  onOpenModels?: (() => void) | undefined;
}) {
  const existing = props.index === null ? undefined : props.profiles[props.index];
  const editor = useProfileEditor({
    profiles: props.profiles,
    index: props.index,
    initial: existing ? draftFromProfile(existing) : emptyDraft(),
    onSaved: async () => {
      await props.reload();
      props.onDone();
    },
  });
  return (
    <ProfileForm
      editor={editor}
      title={existing ? `Edit ${existing.name}` : "New profile"}
      secretNames={props.secretNames}
      onCancel={props.onDone}
      submitLabel={existing ? "Save changes" : "Add profile"}
      onOpenModels={props.onOpenModels}
    />
  );
}
