import type postgres from "postgres";
import { uuid } from "../lib/crypto/index.js";
import { connectPostgres } from "./postgres-connect.js";

/** Hears a NOTIFY channel (Database.listen): each payload, and when the subscription holds or drops. */
export interface ChangeListener {
  notify(payload: string): void;
  ready(): void;
  lost(): void;
}

const RESUBSCRIBE_MIN_MS = 250;
const RESUBSCRIBE_MAX_MS = 10_000;
/** How often the subscription proves it hears announcements, and how long the proof may take. */
const HEARTBEAT_MS = 5_000;
const HEARTBEAT_TIMEOUT_MS = 3_000;

/**
 * LISTEN on a connection of its own (a pooled connection would carry it back into the pool), named
 * "keyward listener" in pg_stat_activity. Every HEARTBEAT_MS it proves that announcements arrive:
 * a NOTIFY sent through the pool must come back on the listener (a live connection is not enough:
 * behind a transaction-pooling proxy LISTEN is accepted and nothing is ever delivered). When that
 * fails, or the connection drops (a restart, a terminated backend), listeners hear `lost` and the
 * subscription is re-made on a fresh connection with back-off until it holds, then `ready`.
 * (postgres-js's own `listen` gives up after one failed attempt and cannot tell a silent cut.) So a
 * change is heard at once, or an instance learns within about eight seconds that it may have
 * missed one.
 */
export class PostgresSubscriptions {
  private readonly channels = new Map<string, ChangeListener[]>();
  private connection?: postgres.Sql;
  private retry?: NodeJS.Timeout;
  private heartbeat?: NodeJS.Timeout;
  private delay = RESUBSCRIBE_MIN_MS;
  private closed = false;
  /** The heartbeat announcement awaited on the listener, if one is out. */
  private awaited?: { payload: string; heard: () => void };

  constructor(
    private readonly url: string,
    private readonly pool: postgres.Sql,
  ) {}

  async listen(channel: string, listener: ChangeListener): Promise<void> {
    const listeners = this.channels.get(channel);
    if (listeners) listeners.push(listener);
    else this.channels.set(channel, [listener]);
    try {
      await this.sql().unsafe(`listen ${quoteIdent(channel)}`);
      listener.ready();
      this.beat();
    } catch {
      // The database is not reachable yet: keep trying in the background (nothing is cached meanwhile).
      this.dropped();
    }
  }

  async close(): Promise<void> {
    this.closed = true;
    clearTimeout(this.retry);
    clearTimeout(this.heartbeat);
    await this.connection?.end({ timeout: 1 });
  }

  private sql(): postgres.Sql {
    if (this.connection) return this.connection;
    const options = {
      max: 1,
      max_lifetime: null,
      fetch_types: false,
      connection: { application_name: "keyward listener" },
      onnotice: () => {},
      // Not in postgres-js's typings, but its hook for NotificationResponse messages.
      onnotify: (channel: string, payload: string) => {
        if (payload === this.awaited?.payload) this.awaited.heard();
        this.channels.get(channel)?.forEach((l) => l.notify(payload));
      },
      onclose: () => {
        if (this.connection === connection) this.dropped();
      },
    };
    const connection = connectPostgres(this.url, options as postgres.Options<Record<string, never>>);
    this.connection = connection;
    return connection;
  }

  /** Drops the connection (if any) and tells listeners; re-subscribing starts after the back-off. */
  private dropped(): void {
    if (this.closed) return;
    const old = this.connection;
    this.connection = undefined;
    void old?.end({ timeout: 0 }).catch(() => {});
    clearTimeout(this.heartbeat);
    for (const listeners of this.channels.values()) listeners.forEach((l) => l.lost());
    clearTimeout(this.retry);
    this.retry = setTimeout(() => void this.resubscribe(), this.delay);
    this.retry.unref();
  }

  private async resubscribe(): Promise<void> {
    if (this.closed) return;
    try {
      for (const channel of this.channels.keys()) await this.sql().unsafe(`listen ${quoteIdent(channel)}`);
      this.delay = RESUBSCRIBE_MIN_MS;
      for (const listeners of this.channels.values()) listeners.forEach((l) => l.ready());
      this.beat();
    } catch {
      if (this.closed) return;
      this.delay = Math.min(this.delay * 2, RESUBSCRIBE_MAX_MS);
      this.dropped();
    }
  }

  private beat(): void {
    clearTimeout(this.heartbeat);
    // Every outcome of a beat is handled inside it (a failure drops the connection): nothing to await.
    this.heartbeat = setTimeout(() => void this.heartbeatOnce(), HEARTBEAT_MS);
    this.heartbeat.unref();
  }

  private async heartbeatOnce(): Promise<void> {
    const connection = this.connection;
    const channel = this.channels.keys().next().value;
    if (!connection || this.closed || channel === undefined) return;
    // Listeners ignore it: no cache's kind is "heartbeat".
    const payload = `heartbeat:${uuid()}`;
    const heard = new Promise<void>((resolve) => (this.awaited = { payload, heard: resolve }));
    let timer: NodeJS.Timeout | undefined;
    const timeout = new Promise<never>((_, reject) => (timer = setTimeout(() => reject(new Error("listener heartbeat timed out")), HEARTBEAT_TIMEOUT_MS)));
    try {
      await Promise.race([this.pool`select pg_notify(${channel}, ${payload})`.then(() => heard), timeout]);
      if (this.connection === connection) this.beat();
    } catch {
      if (this.connection === connection) this.dropped();
    } finally {
      clearTimeout(timer);
      this.awaited = undefined;
    }
  }
}

const quoteIdent = (name: string) => `"${name.replace(/"/g, '""')}"`;
