import { useEffect, useState } from "react";
import { commands } from "../bindings";
import { call, errorMessage } from "../ipc/call";

/** A size for people, as the engine writes it: `812 B`, `12 KB`, `3.4 MB` (1 KB = 1024 B). */
export function formatSize(bytes: number): string {
  if (bytes < 1024) return `${bytes} B`;
  if (bytes < 1024 * 1024) return `${Math.ceil(bytes / 1024)} KB`;
  return `${(bytes / (1024 * 1024)).toFixed(1)} MB`;
}

/** What the window shows inline: images and audio. Other binary content is a line with its
 * type and size (the library exports it). */
export function shownInline(mime: string): "image" | "audio" | null {
  if (mime.startsWith("image/")) return "image";
  if (mime.startsWith("audio/")) return "audio";
  return null;
}

/** A binary artifact (a tool's image or audio) shown for its type: an image, an audio player,
 * or its type and size. The bytes come once through `get_artifact_bytes` and are shown as a
 * `data:` URL, which the window's CSP admits for images and media only; an image element never
 * runs what it shows (an SVG's scripts included). A text artifact (an MCP server's embedded
 * text resource, `text` set) is never loaded here: it is a link that opens it with `onOpen`. */
export function BinaryContent(props: {
  conversationId: string;
  id: string;
  mime: string;
  sizeBytes: number;
  title: string;
  text?: boolean | undefined;
  onOpen?: ((id: string) => void) | undefined;
}) {
  const { conversationId, id, mime, sizeBytes, title, text, onOpen } = props;
  const kind = text ? null : shownInline(mime);
  const [url, setUrl] = useState<string | null>(null);
  const [error, setError] = useState<string | null>(null);
  useEffect(() => {
    if (kind === null) return;
    let alive = true;
    void call(commands.getArtifactBytes(conversationId, id)).then(
      (b) => alive && setUrl(`data:${b.content_type};base64,${b.base64}`),
      (e: unknown) => alive && setError(errorMessage(e)),
    );
    return () => {
      alive = false;
    };
  }, [conversationId, id, kind]);
  const label = `${title || id} (${mime}, ${formatSize(sizeBytes)})`;
  return (
    <figure className="binary-content" data-testid="binary-content" data-artifact-id={id}>
      {error && <p role="alert">{error}</p>}
      {kind === "image" && url && <img src={url} alt={label} data-testid="binary-image" />}
      {kind === "audio" && url && (
        <audio controls src={url} aria-label={label} data-testid="binary-audio" />
      )}
      {text && onOpen && (
        <button
          type="button"
          className="link-button"
          data-testid="attachment-open"
          onClick={() => onOpen(id)}
        >
          Open {title || id}
        </button>
      )}
      <figcaption className="muted small">
        {title ? `${title} · ` : ""}
        {mime} · {formatSize(sizeBytes)} · {id}
      </figcaption>
    </figure>
  );
}
