/** "3d 4h", "2h 5m", "45m", "30s": the two largest units, for time left on certificates and access. */
export function formatDuration(ms: number): string {
  const s = Math.max(0, Math.floor(ms / 1000));
  const parts: Array<[number, string]> = [
    [Math.floor(s / 86_400), "d"],
    [Math.floor((s % 86_400) / 3600), "h"],
    [Math.floor((s % 3600) / 60), "m"],
    [s % 60, "s"],
  ];
  const first = parts.findIndex(([n]) => n > 0);
  if (first === -1) return "0s";
  return parts
    .slice(first, first + 2)
    .filter(([n]) => n > 0)
    .map(([n, u]) => `${n}${u}`)
    .join(" ");
}

/** "in 7h 59m" or "2h ago". */
export function relative(when: Date, now: Date = new Date()): string {
  const ms = when.getTime() - now.getTime();
  return ms >= 0 ? `in ${formatDuration(ms)}` : `${formatDuration(-ms)} ago`;
}

/** A local, minute-precision timestamp: what a person reads in a terminal. */
export function localTime(when: Date): string {
  const p = (n: number) => String(n).padStart(2, "0");
  return `${when.getFullYear()}-${p(when.getMonth() + 1)}-${p(when.getDate())} ${p(when.getHours())}:${p(when.getMinutes())}`;
}
