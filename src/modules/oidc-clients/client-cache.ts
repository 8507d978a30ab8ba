import { AnnouncedCache, noteChanged } from "../../infra/announced-cache.js";
import type { Database } from "../../infra/db.js";

/** Clients held at once per instance; the oldest read goes first. */
const MAX_ENTRIES = 1_000;
/** What announces changes to a client (migration 0017). */
const TRIGGERS = ["oidc_clients_notify_changed", "organizations_notify_clients_changed"];

/**
 * Clients as the provider reads them on every request (client authentication, grant checks), kept
 * in memory with their secret unsealed, so a token request does not read and unseal the same row
 * each time. Triggers on oidc_clients and organizations (migration 0017) announce "client:<id>" or
 * "client:*" for every committed change; src/infra/announced-cache.ts says why that keeps it exact:
 * a rotated secret, a narrowed grant or a deleted client stops working on every instance at once.
 */
export function createClientCache<T>(changes: Pick<Database, "listen" | "db">, ttlMs: number, load: (clientId: string) => Promise<T | undefined>): AnnouncedCache<T> {
  const cache = new AnnouncedCache<T>({ kind: "client", load, ttlMs, maxEntries: MAX_ENTRIES, triggers: TRIGGERS });
  // Until the subscription holds (or if it never does) the cache serves nothing: failure is safe.
  void cache.attach(changes).catch(() => undefined);
  return cache;
}

/** Called by every write this process makes to a client, before it commits. `"*"`: every client. */
export function noteClientChanged(clientId: string | "*"): void {
  noteChanged("client", clientId);
}

/** Runs a write to a client after telling this process's caches (they hold it until the commit is announced). */
export function changingClient<T>(clientId: string, write: () => Promise<T>): Promise<T> {
  noteClientChanged(clientId);
  return write();
}
