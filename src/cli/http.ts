/** fetch with a deadline: a server that accepts the connection and never answers must not hang the CLI. */
export function fetchWithTimeout(url: string, init: RequestInit = {}, ms = 30_000): Promise<Response> {
  return fetch(url, { ...init, signal: init.signal ?? AbortSignal.timeout(ms) });
}
