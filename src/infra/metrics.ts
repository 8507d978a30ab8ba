import { collectDefaultMetrics, Counter, Gauge, Histogram, Registry } from "prom-client";

/**
 * Prometheus metrics (prom-client), one registry per container so that several instances in one
 * process (tests) never share counters. Label values are always bounded: route templates, schema
 * field names, fixed outcome words; never ids, tokens, e-mail addresses or raw URLs.
 */

/** What the outbox looks like now (collected on scrape). */
export interface OutboxSnapshot {
  /** Messages per status, without `sent` (which only grows). */
  byStatus: Record<string, number>;
  /** Age of the oldest pending message in seconds; 0 when none is pending. */
  oldestPendingAgeSeconds: number;
}

/** Database health as seen on scrape. */
export interface DatabaseSnapshot {
  kind: string;
  up: boolean;
  pingSeconds: number;
  poolSize: number;
  /** Server-side connections to this database by state (PostgreSQL only). */
  connections?: Record<string, number>;
}

export interface RedisSnapshot {
  up: boolean;
  pingSeconds: number;
  /** ioredis' connection state: ready, connecting, reconnecting, end, … */
  status: string;
}

/** Scrape-time sources, wired by the container (each may be missing, e.g. no Redis on the embedded default). */
export interface ScrapeSources {
  outbox?: () => Promise<OutboxSnapshot>;
  database?: () => Promise<DatabaseSnapshot>;
  redis?: () => Promise<RedisSnapshot>;
}

const LATENCY_BUCKETS = [0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10];
const JOB_BUCKETS = [0.01, 0.05, 0.1, 0.5, 1, 5, 10, 30, 60, 300];
const REDIS_STATUSES = ["wait", "connecting", "connect", "ready", "reconnecting", "close", "end"];

export function createMetrics(options: { version: string; defaultMetrics?: boolean }) {
  const registry = new Registry();
  if (options.defaultMetrics !== false) collectDefaultMetrics({ register: registry });
  const registers = [registry];
  let sources: ScrapeSources = {};

  new Gauge({ name: "keyward_build_info", help: "Always 1; the running version as a label", labelNames: ["version"], registers }).set({ version: options.version }, 1);

  const http = new Histogram({
    name: "keyward_http_request_duration_seconds",
    help: "HTTP requests by method, route template (unmatched for no route) and status class; _count is the request rate",
    labelNames: ["method", "route", "status_class"] as const,
    buckets: LATENCY_BUCKETS,
    registers,
  });
  const graphql = new Histogram({
    name: "keyward_graphql_operation_duration_seconds",
    help: "GraphQL operations by type, root field (schema-bounded; client-chosen operation names are not used) and outcome",
    labelNames: ["type", "operation", "outcome"] as const,
    buckets: LATENCY_BUCKETS,
    registers,
  });
  const signIns = new Counter({ name: "keyward_sign_ins_total", help: "Sign-in attempts by first factor and result", labelNames: ["method", "result"] as const, registers });
  const mfa = new Counter({ name: "keyward_mfa_verifications_total", help: "Second-factor checks by method and result", labelNames: ["method", "result"] as const, registers });
  const certificates = new Counter({ name: "keyward_ssh_certificates_total", help: "SSH certificate requests by result (issued, failed) and error code", labelNames: ["result", "reason"] as const, registers });
  const oidcTokens = new Counter({ name: "keyward_oidc_tokens_total", help: "OIDC token endpoint outcomes by grant type and result (issued, or the OAuth error code)", labelNames: ["grant_type", "result"] as const, registers });
  const rateLimited = new Counter({ name: "keyward_rate_limited_total", help: "Requests refused by a rate limit or lockout, by limit name", labelNames: ["limit"] as const, registers });
  const audit = new Counter({ name: "keyward_audit_events_total", help: "Audit records written, by action and success", labelNames: ["action", "success"] as const, registers });
  const jobRuns = new Counter({ name: "keyward_job_runs_total", help: "Background job runs by job and result", labelNames: ["job", "result"] as const, registers });
  const jobDuration = new Histogram({ name: "keyward_job_duration_seconds", help: "Background job run time", labelNames: ["job"] as const, buckets: JOB_BUCKETS, registers });
  const jobLastSuccess = new Gauge({ name: "keyward_job_last_success_timestamp_seconds", help: "When each job last succeeded (Unix time)", labelNames: ["job"] as const, registers });

  // One snapshot per scrape: every gauge below reads the same in-flight collection.
  let inflight: Promise<Snapshot> | null = null;
  const snapshot = (): Promise<Snapshot> => {
    inflight ??= collect(sources).finally(() => {
      inflight = null;
    });
    return inflight;
  };

  new Gauge({
    name: "keyward_email_outbox_messages",
    help: "Outbox messages waiting or given up on, by status (pending, failed = retrying, dead)",
    labelNames: ["status"] as const,
    registers,
    async collect() {
      const { outbox } = await snapshot();
      this.reset();
      if (outbox) for (const [status, n] of Object.entries(outbox.byStatus)) this.set({ status }, n);
    },
  });
  new Gauge({
    name: "keyward_email_outbox_oldest_pending_age_seconds",
    help: "Age of the oldest pending outbox message (0 when none)",
    registers,
    async collect() {
      const { outbox } = await snapshot();
      if (outbox) this.set(outbox.oldestPendingAgeSeconds);
    },
  });
  new Gauge({
    name: "keyward_database_up",
    help: "1 when the database answered a ping during this scrape",
    labelNames: ["kind"] as const,
    registers,
    async collect() {
      const { database } = await snapshot();
      this.reset();
      if (database) this.set({ kind: database.kind }, database.up ? 1 : 0);
    },
  });
  new Gauge({
    name: "keyward_database_ping_seconds",
    help: "Round trip of the scrape's database ping",
    registers,
    async collect() {
      const { database } = await snapshot();
      if (database) this.set(database.pingSeconds);
    },
  });
  new Gauge({
    name: "keyward_database_pool_size",
    help: "Connections this instance's pool may open (1 on the embedded PGlite)",
    registers,
    async collect() {
      const { database } = await snapshot();
      if (database) this.set(database.poolSize);
    },
  });
  new Gauge({
    name: "keyward_database_connections",
    help: "Server-side connections to Keyward's database by state, all instances (pg_stat_activity; PostgreSQL only)",
    labelNames: ["state"] as const,
    registers,
    async collect() {
      const { database } = await snapshot();
      this.reset();
      for (const [state, n] of Object.entries(database?.connections ?? {})) this.set({ state }, n);
    },
  });
  new Gauge({
    name: "keyward_redis_configured",
    help: "1 when REDIS_URL is set; 0 on the embedded default (in-process sessions and limits)",
    registers,
    collect() {
      this.set(sources.redis ? 1 : 0);
    },
  });
  // Redis series exist only with Redis (the embedded default has none to report).
  const registerRedisGauges = () => {
    new Gauge({
      name: "keyward_redis_up",
      help: "1 when Redis answered a ping during this scrape",
      registers,
      async collect() {
        const { redis } = await snapshot();
        this.set(redis?.up ? 1 : 0);
      },
    });
    new Gauge({
      name: "keyward_redis_ping_seconds",
      help: "Round trip of the scrape's Redis ping",
      registers,
      async collect() {
        const { redis } = await snapshot();
        if (redis) this.set(redis.pingSeconds);
      },
    });
    new Gauge({
      name: "keyward_redis_connection_status",
      help: "1 for the Redis client's current connection state",
      labelNames: ["status"] as const,
      registers,
      async collect() {
        const { redis } = await snapshot();
        this.reset();
        if (redis) this.set({ status: REDIS_STATUSES.includes(redis.status) ? redis.status : "other" }, 1);
      },
    });
  };
  let redisGauges = false;

  return {
    registry,
    http,
    graphql,
    signIns,
    mfa,
    certificates,
    oidcTokens,
    rateLimited,
    audit,
    /** Records one finished job run. */
    jobRun(job: string, ok: boolean, seconds: number) {
      jobRuns.inc({ job, result: ok ? "success" : "failure" });
      jobDuration.observe({ job }, seconds);
      if (ok) jobLastSuccess.set({ job }, Date.now() / 1000);
    },
    /** Where scrape-time gauges read from (set once by the container, after the modules exist). */
    setSources(next: ScrapeSources) {
      sources = next;
      if (next.redis && !redisGauges) {
        registerRedisGauges();
        redisGauges = true;
      }
    },
    /** The exposition text and its content type. */
    async scrape(): Promise<{ contentType: string; body: string }> {
      return { contentType: registry.contentType, body: await registry.metrics() };
    },
  };
}

export type Metrics = ReturnType<typeof createMetrics>;

interface Snapshot {
  outbox?: OutboxSnapshot;
  database?: DatabaseSnapshot;
  redis?: RedisSnapshot;
}

/** Runs every source at once; a failing source is left out of this scrape rather than failing it. */
async function collect(sources: ScrapeSources): Promise<Snapshot> {
  const settle = <T>(fn?: () => Promise<T>) => (fn ? fn().catch(() => undefined) : Promise.resolve(undefined));
  const [outbox, database, redis] = await Promise.all([settle(sources.outbox), settle(sources.database), settle(sources.redis)]);
  return { outbox, database, redis };
}

/** Times a ping with a deadline; never throws. */
export async function timedPing(ping: () => Promise<unknown>, timeoutMs = 2000): Promise<{ up: boolean; seconds: number }> {
  const start = performance.now();
  let timer: NodeJS.Timeout | undefined;
  try {
    await Promise.race([ping(), new Promise((_, reject) => (timer = setTimeout(() => reject(new Error("timeout")), timeoutMs)))]);
    return { up: true, seconds: (performance.now() - start) / 1000 };
  } catch {
    return { up: false, seconds: (performance.now() - start) / 1000 };
  } finally {
    clearTimeout(timer);
  }
}
