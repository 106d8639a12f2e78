import type { External } from "./useFileEditor";

/** Offers what to do when the open file changed or vanished on disk. */
export function ExternalChangeBanner(props: {
  file: { external: External; reloadFromDisk: () => void; keepMine: () => void };
}) {
  const { external } = props.file;
  if (!external) return null;
  return (
    <div className="banner banner-warning" role="alert" data-testid="external-change">
      {external.kind === "changed" ? (
        <>
          <span>This file was changed outside the app while you were editing it.</span>
          <button type="button" onClick={props.file.reloadFromDisk} data-testid="reload-from-disk">
            Reload from disk (drop my changes)
          </button>
          <button type="button" onClick={props.file.keepMine}>
            Keep my version
          </button>
        </>
      ) : (
        <>
          <span>This file was deleted or renamed outside the app.</span>
          <button type="button" onClick={props.file.keepMine}>
            Keep editing as a new file
          </button>
        </>
      )}
    </div>
  );
}
