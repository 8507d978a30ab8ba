import { useRouter, type ErrorComponentProps } from "@tanstack/react-router";
import { ApiError } from "../api";
import { Button } from "./Button";

/**
 * A screen that failed to load or render. After a new release the browser may still hold the old
 * app, whose screen files are gone from the server: that is said plainly, with a reload. Anything
 * else shows the API's words (or a generic message) and a retry that loads the screen again.
 */
const STALE_APP = /dynamically imported module|Importing a module script failed|error loading dynamically imported module/i;

export function RouteError({ error, reset }: ErrorComponentProps) {
  const router = useRouter();
  if (error instanceof Error && STALE_APP.test(error.message)) {
    return (
      <div className="notice notice-warn" role="alert">
        <p>Keyward was updated since this page was opened. Reload to continue with the new version.</p>
        <Button variant="secondary" size="small" onPress={() => window.location.reload()}>
          Reload
        </Button>
      </div>
    );
  }
  return (
    <div className="notice notice-error" role="alert">
      <p>{error instanceof ApiError ? error.message : "This screen could not be shown."}</p>
      <Button
        variant="secondary"
        size="small"
        onPress={() => {
          reset();
          void router.invalidate();
        }}
      >
        Try again
      </Button>
    </div>
  );
}
