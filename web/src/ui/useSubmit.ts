import { useRef, type FormEvent } from "react";

/**
 * A form's submit handler that runs `run` once at a time. A double click submits twice within one
 * tick, before any re-render could disable the button; this guard is synchronous, so the second
 * submission is dropped and one thing is created, not two.
 */
export function useSubmit(run: () => Promise<unknown>): (e: FormEvent<HTMLFormElement>) => void {
  const busy = useRef(false);
  return (e) => {
    e.preventDefault();
    if (busy.current) return;
    busy.current = true;
    // The mutation's own state shows the outcome; nothing to do with a rejection here.
    void run()
      .catch(() => undefined)
      .finally(() => {
        busy.current = false;
      });
  };
}
