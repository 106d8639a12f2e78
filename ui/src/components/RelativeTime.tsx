import { useEffect, useState } from "react";

const MINUTE = 60_000;
const HOUR = 60 * MINUTE;
const DAY = 24 * HOUR;

/** Midnight (local time) of the day `d` falls on. */
const dayStart = (d: Date) => new Date(d.getFullYear(), d.getMonth(), d.getDate()).getTime();

/**
 * `when` relative to `now`, as people say it: "just now", "5 min ago", "3 h ago", "yesterday",
 * "4 days ago", then the local date ("28 Nov 2026"). Future times (a clock a little ahead)
 * read as "just now".
 */
export function relativeTime(when: Date, now: Date = new Date()): string {
  const ago = now.getTime() - when.getTime();
  if (ago < 45_000) return "just now";
  if (ago < HOUR) return `${Math.max(1, Math.round(ago / MINUTE))} min ago`;
  const days = Math.round((dayStart(now) - dayStart(when)) / DAY);
  if (days === 0) return `${Math.floor(ago / HOUR)} h ago`;
  if (days === 1) return "yesterday";
  if (days < 7) return `${days} days ago`;
  return when.toLocaleDateString(undefined, { day: "numeric", month: "short", year: "numeric" });
}

/** The exact local date and time, for the hover text. */
export function exactTime(when: Date): string {
  return when.toLocaleString(undefined, { dateStyle: "full", timeStyle: "medium" });
}

/** Re-render once a minute, so "5 min ago" does not stay "just now". */
function useMinuteTick(): Date {
  const [now, setNow] = useState(() => new Date());
  useEffect(() => {
    const timer = window.setInterval(() => setNow(new Date()), MINUTE);
    return () => window.clearInterval(timer);
  }, []);
  return now;
}

/**
 * A timestamp from the backend (RFC 3339, UTC) in local time: relative ("5 min ago") with the
 * exact local date and time on hover. Text that is not a date is shown as it is.
 */
export function RelativeTime({ value, className }: { value: string; className?: string }) {
  const now = useMinuteTick();
  const when = new Date(value);
  if (Number.isNaN(when.getTime())) return <span className={className}>{value}</span>;
  return (
    <time dateTime={when.toISOString()} title={exactTime(when)} className={className}>
      {relativeTime(when, now)}
    </time>
  );
}
