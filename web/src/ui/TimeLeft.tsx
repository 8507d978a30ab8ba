import { useEffect, useState } from "react";

/**
 * Durations in words ("1 h 29 min", "3 d 4 h"): two units at most, the larger first. Used for
 * time left on activations and certificates, and for configured lifetimes.
 */
export function duration(minutes: number): string {
  const m = Math.max(0, Math.round(minutes));
  if (m < 60) return `${m} min`;
  const d = Math.floor(m / 1440);
  const h = Math.floor((m % 1440) / 60);
  const rest = m % 60;
  if (d > 0) return h > 0 ? `${d} d ${h} h` : `${d} d`;
  return rest > 0 ? `${h} h ${rest} min` : `${h} h`;
}

/** ISO 8601 duration for machines (`<time datetime>`). */
const isoDuration = (minutes: number) => `PT${Math.max(0, Math.round(minutes))}M`;

/** The current time, refreshed every `everyMs` while the screen is open. */
export function useNow(everyMs = 30_000): number {
  const [now, setNow] = useState(() => Date.now());
  useEffect(() => {
    const t = setInterval(() => setNow(Date.now()), everyMs);
    return () => clearInterval(t);
  }, [everyMs]);
  return now;
}

/** Time left until `until`, as a duration that counts down while the screen is open ("ended" once past). */
export function TimeLeft({ until }: { until: string }) {
  const now = useNow();
  const end = new Date(until);
  const minutes = Math.ceil((end.getTime() - now) / 60_000);
  if (minutes <= 0) return <span className="muted">ended</span>;
  return (
    <time dateTime={isoDuration(minutes)} title={`until ${end.toLocaleString()}`}>
      {duration(minutes)} left
    </time>
  );
}
