/**
 * A config file's full path behind a "Show file" disclosure: the screen names things by what
 * people call them, and the path (long, rarely needed) is one click away, selectable to copy.
 */
export function ShowFile({ path }: { path: string }) {
  return (
    <details className="show-file" data-testid="show-file">
      <summary>Show file</summary>
      <code>{path}</code>
    </details>
  );
}
