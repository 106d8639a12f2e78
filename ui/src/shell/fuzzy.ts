/**
 * How well `text` matches `query` as a fuzzy filter: every character of the query in order
 * (any case), or null. Lower is better: matches at word starts and in runs score best, so
 * "nc" finds "New conversation" before "Unconfirmed".
 */
export function fuzzyScore(query: string, text: string): number | null {
  const q = query.trim().toLowerCase();
  if (q === "") return 0;
  const t = text.toLowerCase();
  const direct = t.indexOf(q);
  if (direct >= 0) return direct === 0 || /\W/.test(t[direct - 1] ?? "") ? 0 : 1;
  // Every letter at a word start ("nc" in "New conversation") beats a match inside a word.
  let score = 0.5;
  let at = -1;
  for (const ch of q) {
    if (ch === " ") continue;
    const next = t.indexOf(ch, at + 1);
    if (next < 0) return null;
    const wordStart = next === 0 || /[\s_\-/.]/.test(t[next - 1] ?? "");
    score += next === at + 1 || wordStart ? 0 : 3;
    at = next;
  }
  return score;
}

/** `items` that match `query`, best first (ties keep their order). */
export function fuzzyFilter<T>(items: readonly T[], query: string, text: (item: T) => string): T[] {
  return items
    .map((item, i) => ({ item, i, score: fuzzyScore(query, text(item)) }))
    .filter((x): x is { item: T; i: number; score: number } => x.score !== null)
    .sort((a, b) => a.score - b.score || a.i - b.i)
    .map((x) => x.item);
}
