import { ApiError, notSignedIn } from "./errors.js";
import { fetchWithTimeout } from "./http.js";
import type { Session } from "./session.js";

interface Envelope {
  success?: boolean;
  message?: string;
  data?: unknown;
  error?: { type?: string; details?: Record<string, unknown> };
}

/**
 * The REST API under {server}/api/v1 with the delegated access token. A 401 gets one refresh and
 * one retry (the token may have expired or been rotated away); a second 401 means sign in again.
 */
export class Api {
  constructor(private readonly session: Session) {}

  async call<T = Record<string, any>>(method: string, path: string, body?: unknown): Promise<T> {
    let token = await this.session.accessToken();
    let res = await this.send(method, path, token, body);
    if (res.status === 401) {
      token = await this.session.accessToken(token);
      res = await this.send(method, path, token, body);
      if (res.status === 401) throw notSignedIn(this.session.server, "refused");
    }
    const envelope = (await res.json().catch(() => null)) as Envelope | null;
    if (!res.ok || !envelope?.success) {
      throw new ApiError(res.status, envelope?.error?.type ?? `HTTP_${res.status}`, envelope?.message ?? `${method} ${path} failed with HTTP ${res.status}`, envelope?.error?.details ?? {});
    }
    return (envelope.data ?? {}) as T;
  }

  private send(method: string, path: string, token: string, body?: unknown): Promise<Response> {
    return fetchWithTimeout(`${this.session.server}/api/v1${path}`, {
      method,
      headers: {
        authorization: `Bearer ${token}`,
        accept: "application/json",
        "user-agent": "keyward-cli",
        ...(body === undefined ? {} : { "content-type": "application/json" }),
      },
      body: body === undefined ? undefined : JSON.stringify(body),
    });
  }

  get = <T = Record<string, any>>(path: string) => this.call<T>("GET", path);
  post = <T = Record<string, any>>(path: string, body: unknown = {}) => this.call<T>("POST", path, body);
  delete = <T = Record<string, any>>(path: string) => this.call<T>("DELETE", path);
}
