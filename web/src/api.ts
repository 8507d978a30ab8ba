import { print } from "@0no-co/graphql.web";
import { QueryClient } from "@tanstack/react-query";
import type { ResultOf, TadaDocumentNode, VariablesOf } from "gql.tada";

/**
 * The app's one way to the server: POST /graphql with JSON (Apollo's CSRF prevention accepts it;
 * the session cookie goes along, same origin). Errors arrive as ApiError with the API's own code,
 * message and, for invalid input, the fields it names; an expired session goes to sign-in and
 * comes back to the same page.
 */
export interface FieldError {
  path: string;
  message: string;
}

export class ApiError extends Error {
  constructor(
    message: string,
    readonly code: string,
    readonly status: number,
    readonly details?: Record<string, unknown>,
  ) {
    super(message);
    this.name = "ApiError";
  }

  /** The API's validation errors by field name (the last segment of each path). */
  get fieldErrors(): Record<string, string> {
    const errors = (this.details?.errors as FieldError[] | undefined) ?? [];
    const out: Record<string, string> = {};
    for (const e of errors) out[e.path.split(".").at(-1) ?? e.path] ??= e.message;
    return out;
  }

  /** Worth trying again by itself: the service was briefly unavailable, or the network failed. */
  get transient(): boolean {
    return this.code === "SERVICE_UNAVAILABLE" || this.code === "NETWORK_ERROR";
  }
}

const SIGNED_OUT = new Set(["AUTH_REQUIRED", "INVALID_TOKEN"]);

/** Sends the browser to sign in, to come back here afterwards. */
export function signInAgain(): void {
  const here = window.location.pathname + window.location.search;
  window.location.assign(`/login?next=${encodeURIComponent(here)}`);
}

interface GraphQLResponse<T> {
  data?: T | null;
  errors?: Array<{ message: string; extensions?: { code?: string; status?: number; details?: Record<string, unknown> } }>;
}

// eslint-disable-next-line @typescript-eslint/no-explicit-any
type AnyDocument = TadaDocumentNode<any, any>;
type Result<D extends AnyDocument> = ResultOf<D>;
type Variables<D extends AnyDocument> = VariablesOf<D>;

export async function gql<D extends AnyDocument>(doc: D, ...[variables]: Variables<D> extends Record<string, never> ? [] : [Variables<D>]): Promise<Result<D>> {
  let res: Response;
  try {
    res = await fetch("/graphql", {
      method: "POST",
      credentials: "same-origin",
      headers: { "content-type": "application/json", accept: "application/graphql-response+json, application/json" },
      body: JSON.stringify({ query: print(doc), variables: variables ?? {} }),
    });
  } catch {
    throw new ApiError("Keyward could not be reached. Check your connection and try again.", "NETWORK_ERROR", 0);
  }
  const body = (await res.json().catch(() => ({}))) as GraphQLResponse<Result<D>>;
  const first = body.errors?.[0];
  if (first) {
    const code = first.extensions?.code ?? "INTERNAL_ERROR";
    if (SIGNED_OUT.has(code)) signInAgain();
    throw new ApiError(first.message, code, first.extensions?.status ?? res.status, first.extensions?.details);
  }
  if (!res.ok || !body.data) throw new ApiError("The server answered in a way the app does not understand. Try again.", "BAD_RESPONSE", res.status);
  return body.data;
}

export const queryClient = new QueryClient({
  defaultOptions: {
    queries: {
      staleTime: 15_000,
      refetchOnWindowFocus: true,
      // Only what may succeed by itself is retried; a refusal stays a refusal.
      retry: (count, error) => count < 2 && error instanceof ApiError && error.transient,
    },
    mutations: { retry: false },
  },
});
