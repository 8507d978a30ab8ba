/** Dates in the reader's zone: relative when recent or near, the exact time on hover and for machines. */
const rtf = new Intl.RelativeTimeFormat(undefined, { numeric: "auto" });
const full = new Intl.DateTimeFormat(undefined, { dateStyle: "medium", timeStyle: "short" });
const day = new Intl.DateTimeFormat(undefined, { dateStyle: "medium" });

export function relative(iso: string, now = Date.now()): string {
  const ms = new Date(iso).getTime() - now;
  const abs = Math.abs(ms);
  if (abs < 45_000) return rtf.format(0, "second");
  if (abs < 45 * 60_000) return rtf.format(Math.round(ms / 60_000), "minute");
  if (abs < 22 * 3_600_000) return rtf.format(Math.round(ms / 3_600_000), "hour");
  if (abs < 26 * 86_400_000) return rtf.format(Math.round(ms / 86_400_000), "day");
  return day.format(new Date(iso));
}

export function Time({ iso, mode = "relative" }: { iso: string | null | undefined; mode?: "relative" | "date" | "full" }) {
  if (!iso) return <span className="muted">never</span>;
  const date = new Date(iso);
  const text = mode === "relative" ? relative(iso) : mode === "date" ? day.format(date) : full.format(date);
  return (
    <time dateTime={iso} title={full.format(date)}>
      {text}
    </time>
  );
}
