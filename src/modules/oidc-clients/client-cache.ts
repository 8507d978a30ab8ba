/**
 * How long a client read from the database is served from this instance's memory. A change made
 * through this process (update, secret rotation, deletion) takes effect here at once (see
 * `noteClientChanged`); one made elsewhere (another instance, an organization's deletion, an
 * operator's SQL) takes effect here within this bound.
 */
export const CLIENT_CACHE_TTL_MS = 1_000;
/** Clients held at once; the oldest read goes first. */
const MAX_ENTRIES = 1_000;

const caches = new Set<WeakRef<ClientCache<unknown>>>();

/**
 * Called by every write this process makes to a client, before the write and again once its
 * transaction has ended: every cache in the process forgets the client, and a read that overlapped
 * the write is not kept (it may have seen the row before the commit). `"*"`: every client.
 */
export function noteClientChanged(clientId: string | "*"): void {
  for (const ref of caches) {
    const cache = ref.deref();
    if (cache) cache.forget(clientId);
    else caches.delete(ref);
  }
}

/** Runs a write to a client between the two `noteClientChanged` calls it needs. */
export async function changingClient<T>(clientId: string, write: () => Promise<T>): Promise<T> {
  noteClientChanged(clientId);
  try {
    return await write();
  } finally {
    noteClientChanged(clientId);
  }
}

/**
 * Clients as the provider reads them on every request (client authentication, grant checks), kept
 * in memory for `ttlMs` so a token request does not read the same row each time. Unknown clients are
 * not kept (a client registered on another instance works here at once). Values are frozen: every
 * request shares them.
 */
export class ClientCache<T> {
  private readonly entries = new Map<string, { value: T; until: number }>();
  private generation = 0;

  constructor(
    private readonly load: (clientId: string) => Promise<T | undefined>,
    private readonly ttlMs = CLIENT_CACHE_TTL_MS,
  ) {
    caches.add(new WeakRef(this as ClientCache<unknown>));
  }

  async get(clientId: string): Promise<T | undefined> {
    // Monotonic: a wall clock stepped back would stretch the bound.
    const startedAt = performance.now();
    const entry = this.entries.get(clientId);
    if (entry && entry.until > startedAt) return entry.value;
    const generation = this.generation;
    const value = await this.load(clientId);
    if (value === undefined || generation !== this.generation || this.ttlMs <= 0) return value;
    this.entries.delete(clientId);
    if (this.entries.size >= MAX_ENTRIES) this.entries.delete(this.entries.keys().next().value!);
    // The bound runs from before the read: the row may have changed as soon as it was read.
    this.entries.set(clientId, { value: deepFreeze(value), until: startedAt + this.ttlMs });
    return value;
  }

  forget(clientId: string | "*"): void {
    this.generation++;
    if (clientId === "*") this.entries.clear();
    else this.entries.delete(clientId);
  }
}

function deepFreeze<T>(value: T): T {
  if (value && typeof value === "object" && !Object.isFrozen(value)) {
    Object.freeze(value);
    for (const v of Object.values(value)) deepFreeze(v);
  }
  return value;
}
