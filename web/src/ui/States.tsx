import type { ReactNode } from "react";
import { ApiError } from "../api";
import { Button } from "./Button";

/** While a screen's data loads: a labelled placeholder that keeps the layout. */
export function Loading({ label = "Loading…" }: { label?: string }) {
  return (
    <p className="loading" role="status" aria-live="polite">
      {label}
    </p>
  );
}

/** A failed read: what happened, in the API's words, and a way to try again. */
export function ErrorState({ error, retry }: { error: unknown; retry?: () => void }) {
  const message = error instanceof ApiError ? error.message : "Something went wrong.";
  return (
    <div className="notice notice-error" role="alert">
      <p>{message}</p>
      {retry && (
        <Button variant="secondary" size="small" onPress={retry}>
          Try again
        </Button>
      )}
    </div>
  );
}

/** An empty list: says so, and what to do next. */
export function Empty({ children }: { children: ReactNode }) {
  return <div className="empty">{children}</div>;
}

/** A mutation's failure that is not about one field. */
export function FormError({ error }: { error: unknown }) {
  if (!error) return null;
  const message = error instanceof ApiError ? error.message : "Something went wrong. Try again.";
  return (
    <p className="notice notice-error" role="alert">
      {message}
    </p>
  );
}

/** A polite announcement of what just happened (screen readers hear it; everyone sees it). */
export function Success({ children }: { children?: ReactNode }) {
  return (
    <p className="notice notice-success" role="status" aria-live="polite">
      {children}
    </p>
  );
}
