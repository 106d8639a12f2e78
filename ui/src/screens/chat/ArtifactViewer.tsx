import { useEffect, useState } from "react";
import { commands, type ArtifactView } from "../../bindings";
import { Markdown } from "../../components/Markdown";
import { Modal } from "../../components/Modal";
import { call, errorMessage } from "../../ipc/call";
import type { SourceAt } from "./citations";
import { SourcePassage } from "../../components/SourcePassage";

/** A quick look at an artifact from a chat link: Markdown rendered safely, other types as text.
 * Opened from a citation (`at`), a source shows its pages with the cited passage highlighted. */
export function ArtifactViewer(props: {
  conversationId: string;
  id: string;
  at?: SourceAt | null;
  onClose: () => void;
}) {
  const [artifact, setArtifact] = useState<ArtifactView | null>(null);
  const [error, setError] = useState<string | null>(null);

  useEffect(() => {
    let alive = true;
    void call(commands.getArtifact(props.conversationId, props.id)).then(
      (artifact) => alive && setArtifact(artifact),
      (e: unknown) => alive && setError(errorMessage(e)),
    );
    return () => {
      alive = false;
    };
  }, [props.conversationId, props.id]);

  return (
    <Modal
      open
      className="permission-dialog artifact-viewer"
      aria-labelledby="artifact-title"
      data-testid="artifact-viewer"
      onEscape={props.onClose}
    >
      <h2 id="artifact-title">{artifact ? artifact.title || artifact.id : props.id}</h2>
      {artifact && (
        <p className="muted small">
          {artifact.id} · {artifact.content_type} · version {artifact.version}
        </p>
      )}
      {error && <p role="alert">{error}</p>}
      {artifact &&
        (props.at ? (
          <div className="artifact-body">
            <SourcePassage content={artifact.content} at={props.at} />
          </div>
        ) : artifact.content_type === "text/markdown" ? (
          <div className="artifact-body">
            <Markdown text={artifact.content} />
          </div>
        ) : (
          <pre className="code artifact-body">{artifact.content}</pre>
        ))}
      <div className="dialog-actions">
        <button type="button" className="primary" autoFocus onClick={props.onClose}>
          Close <kbd>Esc</kbd>
        </button>
      </div>
    </Modal>
  );
}
