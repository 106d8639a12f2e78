import { useEffect, useState } from "react";
import { commands } from "../bindings";
import { call, errorMessage } from "../ipc/call";

/** What a click on a link does: nothing special (a jump within the page), open it outside the
 * app (http, https, mailto), or nothing at all (every other kind, and the app's own pages). */
export type LinkAction =
  { kind: "in_page" } | { kind: "external"; url: string } | { kind: "refused"; url: string };

const EXTERNAL_PROTOCOLS = ["http:", "https:", "mailto:"];

/** The action for a link `href` on a page at `base` (the app's own address). */
export function linkAction(href: string, base: string): LinkAction {
  if (href.startsWith("#")) return { kind: "in_page" };
  let url: URL;
  try {
    url = new URL(href, base);
  } catch {
    return { kind: "refused", url: href };
  }
  // A link resolving to the app's own origin would reload the app (live state lost).
  const own = new URL(base);
  const sameApp = url.protocol === own.protocol && url.host === own.host;
  if (EXTERNAL_PROTOCOLS.includes(url.protocol) && !sameApp)
    return { kind: "external", url: url.href };
  return { kind: "refused", url: href };
}

/** At most this many characters of a refused link are shown. */
const SHOWN_CHARS = 80;

/**
 * One delegated handler at the app's root for every link the window shows (Markdown answers,
 * artifacts, tool cards): the window itself never follows a link (the backend's navigation
 * guard refuses that too); http(s) and mailto links open in the system's browser or mail
 * program, and anything else is refused with a notice.
 */
export function ExternalLinks() {
  const [notice, setNotice] = useState<string | null>(null);

  useEffect(() => {
    const onClick = (e: MouseEvent) => {
      const link = e.target instanceof Element ? e.target.closest("a, area") : null;
      const href = link?.getAttribute("href") ?? link?.getAttribute("xlink:href");
      if (!href) return;
      const action = linkAction(href, document.baseURI);
      if (action.kind === "in_page") return;
      e.preventDefault();
      if (action.kind === "refused") {
        const shown =
          action.url.length > SHOWN_CHARS ? `${action.url.slice(0, SHOWN_CHARS)}…` : action.url;
        setNotice(
          `Not opened: ${shown}. Only http, https and mailto links open (in your browser or mail program).`,
        );
        return;
      }
      setNotice(null);
      call(commands.openExternal(action.url)).catch((e: unknown) => setNotice(errorMessage(e)));
    };
    document.addEventListener("click", onClick, true);
    document.addEventListener("auxclick", onClick, true);
    return () => {
      document.removeEventListener("click", onClick, true);
      document.removeEventListener("auxclick", onClick, true);
    };
  }, []);

  if (!notice) return null;
  return (
    <div className="link-notice" role="status" data-testid="link-notice">
      <span>{notice}</span>
      <button type="button" className="link-button" onClick={() => setNotice(null)}>
        Dismiss
      </button>
    </div>
  );
}
