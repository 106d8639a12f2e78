/** Focus `textarea` and select its 1-based `line`. */
export function selectLine(textarea: HTMLTextAreaElement | null, line: number | null) {
  if (!textarea || line === null) return;
  const lines = textarea.value.split("\n");
  const start = lines.slice(0, line - 1).reduce((n, l) => n + l.length + 1, 0);
  textarea.focus();
  textarea.setSelectionRange(start, start + (lines[line - 1]?.length ?? 0));
}
