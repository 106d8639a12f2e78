/** Shorten a file path to at most `max` characters, keeping its end: `…/home/config`. */
export function shortenPath(path: string, max = 24): string {
  if (path.length <= max) return path;
  const parts = path.split(/([/\\])/);
  let tail = "";
  for (let i = parts.length - 1; i >= 0; i--) {
    const next = (parts[i] ?? "") + tail;
    if (next.length + 1 > max) break;
    tail = next;
  }
  if (tail === "" || tail === "/" || tail === "\\") tail = path.slice(path.length - (max - 1));
  return `…${tail}`;
}
