/** The date groups of the conversation list, newest first: Today, Yesterday, Previous 7 days,
 * Previous 30 days, then one per month ("November 2026"). */
export function dateGroup(updatedAt: string, now: Date = new Date()): string {
  const when = new Date(updatedAt);
  if (Number.isNaN(when.getTime())) return "Older";
  // Calendar days in local time, so "Yesterday" starts at the user's midnight.
  const startOf = (d: Date) => new Date(d.getFullYear(), d.getMonth(), d.getDate()).getTime();
  const days = Math.round((startOf(now) - startOf(when)) / 86_400_000);
  if (days <= 0) return "Today";
  if (days === 1) return "Yesterday";
  if (days < 7) return "Previous 7 days";
  if (days < 30) return "Previous 30 days";
  return when.toLocaleDateString(undefined, { month: "long", year: "numeric" });
}

export type ListRow<T> = { kind: "group"; label: string } | { kind: "item"; item: T };

/** `items` (newest first) with a group heading before the first item of each date group. */
export function withGroups<T extends { updated_at: string }>(
  items: readonly T[],
  now: Date = new Date(),
): ListRow<T>[] {
  const rows: ListRow<T>[] = [];
  let last: string | null = null;
  for (const item of items) {
    const label = dateGroup(item.updated_at, now);
    if (label !== last) rows.push({ kind: "group", label });
    last = label;
    rows.push({ kind: "item", item });
  }
  return rows;
}
