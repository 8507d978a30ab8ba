import type { Database } from "../../infra/db.js";
import { usersRepository, type ProfileRow } from "./users.repository.js";

/** The NOTIFY channel the database's triggers announce committed changes on (migration 0016). */
export const CHANGES_CHANNEL = "keyward_changes";
const USER_PREFIX = "user:";
const EVERYONE = "user:*";
/** Accounts held at once; the oldest read goes first. */
const MAX_ENTRIES = 10_000;
/**
 * A profile changed by this process is not cached again until the database announces the change
 * (its commit): until then a read may still see the old row. A rolled-back change announces
 * nothing, so the hold ends by itself after this long.
 */
const HOLD_MS = 5_000;

const caches = new Set<UserCache>();

/**
 * Called by every write this process makes to what a profile shows, before it commits: every
 * cache in the process forgets the account at once and holds it until the commit's announcement.
 * Over-forgetting (another container in the process, a rolled-back write) only costs a read.
 */
export function noteProfileChanged(userId: string | "*"): void {
  for (const cache of caches) cache.changedHere(userId);
}

/**
 * Account profiles (the row behind the signed-in caller and GET me) kept in this instance's memory,
 * so an authenticated request does not read the same row from PostgreSQL every time.
 *
 * Why it is safe: the database itself announces every committed change to what a profile shows
 * (triggers on users, password_credentials and organizations NOTIFY "keyward_changes"), whichever
 * instance or SQL made it, and every instance forgets the account the moment it hears. While the
 * subscription is down (a restart, a network cut) nothing is served from memory and what was held
 * is dropped, since announcements may have been missed. A load that overlaps any announcement is
 * not kept (it may have read the row before the commit). This process's own writes forget at once
 * and hold the account until their commit is announced, so a caller reads its own writes. `ttlMs`
 * bounds anything else (0: no cache).
 */
export class UserCache {
  private readonly entries = new Map<string, { row: ProfileRow; until: number }>();
  private readonly held = new Map<string, number>();
  private heldAll = 0;
  private generation = 0;
  private live = false;

  constructor(
    private readonly load: (id: string) => Promise<ProfileRow | undefined>,
    private readonly ttlMs: number,
  ) {}

  /** Subscribes to the database's announcements; the cache serves nothing until they flow. */
  static async create(database: Database, ttlMs: number): Promise<UserCache> {
    const cache = new UserCache((id) => usersRepository.findProfile(database.db, id), ttlMs);
    if (ttlMs === 0) return cache;
    caches.add(cache);
    await database.listen(CHANGES_CHANNEL, {
      notify: (payload) => cache.announced(payload),
      ready: () => cache.resume(),
      lost: () => cache.suspend(),
    });
    return cache;
  }

  /** The live account's profile, from memory when it may be; undefined for unknown or deleted accounts. */
  async get(id: string): Promise<ProfileRow | undefined> {
    const now = performance.now();
    if (this.live) {
      const entry = this.entries.get(id);
      if (entry && entry.until > now) return entry.row;
    }
    const generation = this.generation;
    const row = await this.load(id);
    if (row && this.live && generation === this.generation && !this.isHeld(id, now)) this.keep(id, row, now);
    return row;
  }

  /** Stops serving from memory (a container closing). */
  close(): void {
    caches.delete(this);
    this.suspend();
  }

  /** The process's own write, before its commit: forget now, hold until announced. */
  changedHere(id: string): void {
    const now = performance.now();
    if (id === "*") this.heldAll = now + HOLD_MS;
    else this.held.set(id, now + HOLD_MS);
    // Holds of rolled-back writes are never announced: drop the lapsed ones now and then.
    if (this.held.size > MAX_ENTRIES) for (const [key, until] of this.held) if (until <= now) this.held.delete(key);
    this.forget(id);
  }

  private announced(payload: string): void {
    if (!payload.startsWith(USER_PREFIX)) return;
    if (payload === EVERYONE) this.heldAll = 0;
    else this.held.delete(payload.slice(USER_PREFIX.length));
    this.forget(payload === EVERYONE ? "*" : payload.slice(USER_PREFIX.length));
  }

  private forget(id: string): void {
    this.generation++;
    if (id === "*") this.entries.clear();
    else this.entries.delete(id);
  }

  private resume(): void {
    this.forget("*");
    this.live = true;
  }

  private suspend(): void {
    this.live = false;
    this.forget("*");
  }

  private isHeld(id: string, now: number): boolean {
    if (this.heldAll > now) return true;
    const until = this.held.get(id);
    if (until === undefined) return false;
    if (until > now) return true;
    this.held.delete(id);
    return false;
  }

  private keep(id: string, row: ProfileRow, now: number): void {
    this.entries.delete(id);
    if (this.entries.size >= MAX_ENTRIES) this.entries.delete(this.entries.keys().next().value!);
    // Shared by every request that reads it: nobody may change it in place.
    this.entries.set(id, { row: Object.freeze(row), until: now + this.ttlMs });
  }
}
