import { sql } from "drizzle-orm";
import { resultRows, type Database } from "./db.js";

/**
 * The NOTIFY channel the database's triggers announce committed changes on (migrations 0016, 0017).
 * Payloads are "<kind>:<key>", or "<kind>:*" for every key of a kind.
 */
export const CHANGES_CHANNEL = "keyward_changes";
/**
 * A key changed by this process is not cached again until the database announces the change (its
 * commit): until then a read may still see the old row. A rolled-back change announces nothing, so
 * the hold ends by itself after this long.
 */
const HOLD_MS = 5_000;

const byKind = new Map<string, Set<AnnouncedCache<unknown>>>();

/**
 * Called by every write this process makes to what a cache of `kind` holds, before it commits:
 * every such cache in the process forgets the key at once and holds it until the commit's
 * announcement. Over-forgetting (another container in the process, a rolled-back write) only costs
 * a read.
 */
export function noteChanged(kind: string, key: string | "*"): void {
  for (const cache of byKind.get(kind) ?? []) cache.changedHere(key);
}

export interface AnnouncedCacheOptions<T> {
  /** The payload prefix its triggers announce: "user" for "user:<id>". */
  kind: string;
  load(key: string): Promise<T | undefined>;
  /** How long a value may be served without news (0: never cached). */
  ttlMs: number;
  maxEntries: number;
  /**
   * The triggers that announce changes to what it holds: until they exist (a database not yet
   * migrated, MIGRATE_ON_START=false before `db:migrate`), nothing is served from memory.
   */
  triggers: readonly string[];
  /** A value that ended by time rather than by a write (nothing announces it): read afresh. */
  stale?(value: T): boolean;
}

/** How soon the triggers are looked for again while they are missing (then every TRIGGER_RECHECK_MAX_MS). */
const TRIGGER_RECHECK_MIN_MS = 250;
const TRIGGER_RECHECK_MAX_MS = 5_000;

/**
 * Rows every request would otherwise read again, kept in this instance's memory and forgotten the
 * moment the database announces a committed change to them.
 *
 * Why it is safe: triggers announce every committed change (whatever wrote it: an instance, a
 * cascade, an operator's SQL) on CHANGES_CHANNEL, and every instance forgets the key when it hears.
 * While the subscription is down (a restart, a network cut; Database.listen re-makes it) nothing
 * is served from memory, and what was held is dropped since announcements may have been missed. A
 * load that overlaps any announcement is not kept (it may have read the row before the commit).
 * This process's own writes forget at once and hold the key until their commit is announced, so a
 * caller reads its own writes. `ttlMs` bounds anything else. Unknown keys are never cached, and
 * values are frozen: every request shares them.
 */
export class AnnouncedCache<T> {
  private readonly entries = new Map<string, { value: T; until: number }>();
  private readonly held = new Map<string, number>();
  private heldAll = 0;
  private generation = 0;
  private live = false;
  private subscribed = false;
  private closed = false;
  private recheck?: NodeJS.Timeout;
  private database?: Pick<Database, "listen" | "db">;

  constructor(private readonly options: AnnouncedCacheOptions<T>) {}

  /** Subscribes to the database's announcements; nothing is served from memory until they flow. */
  async attach(database: Pick<Database, "listen" | "db">): Promise<this> {
    if (this.options.ttlMs === 0) return this;
    this.database = database;
    let kinds = byKind.get(this.options.kind);
    if (!kinds) byKind.set(this.options.kind, (kinds = new Set()));
    kinds.add(this as AnnouncedCache<unknown>);
    await database.listen(CHANGES_CHANNEL, {
      notify: (payload) => this.announced(payload),
      ready: () => this.resume(),
      lost: () => this.suspend(),
    });
    return this;
  }

  /** The value for `key`, from memory when it may be; undefined when the loader has none. */
  async get(key: string): Promise<T | undefined> {
    // Monotonic: a wall clock stepped back would stretch the bound.
    const now = performance.now();
    if (this.live) {
      const entry = this.entries.get(key);
      if (entry && entry.until > now && !this.options.stale?.(entry.value)) return entry.value;
    }
    const generation = this.generation;
    const value = await this.options.load(key);
    if (value !== undefined && this.live && generation === this.generation && !this.isHeld(key, now)) this.keep(key, value, now);
    return value;
  }

  /** Stops serving from memory and leaves the process's registry (a container closing). */
  close(): void {
    this.closed = true;
    clearTimeout(this.recheck);
    byKind.get(this.options.kind)?.delete(this as AnnouncedCache<unknown>);
    this.suspend();
  }

  /** This process's own write, before its commit: forget now, hold until announced. */
  changedHere(key: string): void {
    const now = performance.now();
    if (key === "*") this.heldAll = now + HOLD_MS;
    else this.held.set(key, now + HOLD_MS);
    // Holds of rolled-back writes are never announced: drop the lapsed ones now and then.
    if (this.held.size > this.options.maxEntries) for (const [k, until] of this.held) if (until <= now) this.held.delete(k);
    this.forget(key);
  }

  private announced(payload: string): void {
    const prefix = `${this.options.kind}:`;
    if (!payload.startsWith(prefix)) return;
    const key = payload.slice(prefix.length);
    if (key === "*") this.heldAll = 0;
    else this.held.delete(key);
    this.forget(key);
  }

  private forget(key: string): void {
    this.generation++;
    if (key === "*") this.entries.clear();
    else this.entries.delete(key);
  }

  private resume(): void {
    this.subscribed = true;
    this.forget("*");
    void this.goLive(TRIGGER_RECHECK_MIN_MS);
  }

  private suspend(): void {
    this.subscribed = false;
    this.live = false;
    clearTimeout(this.recheck);
    this.forget("*");
  }

  /** Serves from memory once its triggers exist; until then looks again, with back-off. */
  private async goLive(delay: number): Promise<void> {
    clearTimeout(this.recheck);
    let present = false;
    try {
      present = await this.triggersPresent();
    } catch {
      // The database did not answer: look again below.
    }
    if (this.closed || !this.subscribed) return;
    if (present) {
      this.forget("*");
      this.live = true;
      return;
    }
    this.recheck = setTimeout(() => void this.goLive(Math.min(delay * 2, TRIGGER_RECHECK_MAX_MS)), delay);
    this.recheck.unref();
  }

  private async triggersPresent(): Promise<boolean> {
    const names = this.options.triggers;
    if (!this.database || names.length === 0) return true;
    const list = sql.join(names.map((n) => sql`${n}`), sql`, `);
    const [row] = resultRows<{ n: number }>(await this.database.db.execute(sql`select count(distinct tgname)::int as n from pg_trigger where tgname in (${list}) and not tgisinternal`));
    return Number(row?.n ?? 0) === new Set(names).size;
  }

  private isHeld(key: string, now: number): boolean {
    if (this.heldAll > now) return true;
    const until = this.held.get(key);
    if (until === undefined) return false;
    if (until > now) return true;
    this.held.delete(key);
    return false;
  }

  private keep(key: string, value: T, now: number): void {
    this.entries.delete(key);
    if (this.entries.size >= this.options.maxEntries) this.entries.delete(this.entries.keys().next().value!);
    this.entries.set(key, { value: deepFreeze(value), until: now + this.options.ttlMs });
  }
}

function deepFreeze<T>(value: T): T {
  if (value && typeof value === "object" && !Object.isFrozen(value)) {
    Object.freeze(value);
    for (const v of Object.values(value)) deepFreeze(v);
  }
  return value;
}
