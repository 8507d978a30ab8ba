import { sql } from "drizzle-orm";
import { bigint, boolean, index, jsonb, pgTable, primaryKey, text, uuid, varchar } from "drizzle-orm/pg-core";
import { createdAt, id, tstz } from "./_columns.js";

/**
 * Append-only (a trigger in the migrations refuses UPDATE and DELETE, except the chaining job
 * filling a record's chain columns once, and pruning past the retention). Written inside the
 * business transaction through audit.record(tx, ctx, action, details), unchained: the chain job
 * (src/modules/audit/chain.service.ts) gives records their place in the global chain and in their
 * organization's, so the insert on hot paths costs what it did.
 */
export const auditLogs = pgTable(
  "audit_logs",
  {
    id: id(),
    createdAt: createdAt(),
    action: varchar("action", { length: 100 }).notNull(),
    /** Who acted (null for anonymous callers, e.g. a failed login for an unknown email). */
    actorId: uuid("actor_id"),
    /** Which user the event is about, when it is about one. */
    userId: uuid("user_id"),
    organizationId: uuid("organization_id"),
    resourceType: varchar("resource_type", { length: 64 }),
    resourceId: varchar("resource_id", { length: 255 }),
    success: boolean("success").notNull().default(true),
    ipAddress: varchar("ip_address", { length: 45 }),
    userAgent: text("user_agent"),
    requestId: varchar("request_id", { length: 128 }),
    metadata: jsonb("metadata").$type<Record<string, unknown>>().notNull().default({}),
    errorMessage: text("error_message"),
    /** Place in the global chain (null until chained) and its SHA-256 link (hex). */
    seq: bigint("seq", { mode: "number" }),
    prevHash: varchar("prev_hash", { length: 64 }),
    hash: varchar("hash", { length: 64 }),
    /** Place in the organization's chain, for records of an organization. */
    orgSeq: bigint("org_seq", { mode: "number" }),
    orgPrevHash: varchar("org_prev_hash", { length: 64 }),
    orgHash: varchar("org_hash", { length: 64 }),
  },
  (t) => [
    index("audit_logs_user_idx").on(t.userId, t.createdAt),
    index("audit_logs_actor_idx").on(t.actorId, t.createdAt),
    // Organization activity: newest first with keyset pagination, optionally by user or action.
    // Ascending on purpose: scanned backwards it yields ORDER BY created_at DESC, id DESC exactly.
    index("audit_logs_org_idx").on(t.organizationId, t.createdAt, t.id),
    index("audit_logs_org_user_idx").on(t.organizationId, t.userId, t.createdAt, t.id),
    index("audit_logs_org_action_idx").on(t.organizationId, t.action, t.createdAt, t.id),
    index("audit_logs_action_idx").on(t.action, t.createdAt),
    // Partial: a new (unchained) record adds an entry to the small unchained index only.
    index("audit_logs_seq_idx").on(t.seq).where(sql`${t.seq} is not null`),
    index("audit_logs_org_seq_idx").on(t.organizationId, t.orgSeq).where(sql`${t.orgSeq} is not null`),
    index("audit_logs_unchained_idx").on(t.createdAt, t.id).where(sql`${t.seq} is null`),
  ],
);

/**
 * Signed anchors of each chain ("global" or an organization id): its head (the last chained record)
 * and its base (the last pruned record, where verification starts). The signature covers kind,
 * chain, seq, hash and signedAt, made with an audit signing key.
 */
export const auditChainAnchors = pgTable(
  "audit_chain_anchors",
  {
    chain: varchar("chain", { length: 64 }).notNull(),
    kind: varchar("kind", { length: 8 }).$type<"head" | "base">().notNull(),
    seq: bigint("seq", { mode: "number" }).notNull(),
    hash: varchar("hash", { length: 64 }).notNull(),
    signedAt: tstz("signed_at").notNull(),
    keyId: varchar("key_id", { length: 64 }).notNull(),
    signature: text("signature").notNull(),
  },
  (t) => [primaryKey({ columns: [t.chain, t.kind] })],
);

/**
 * The last verification of each chain (the global one and every organization's), by an operator or
 * by the organization's admins: what a home screen says about a chain without walking it again.
 * `report` is the walk's ChainReport (src/modules/audit/chain-walk.ts).
 */
export const auditChainChecks = pgTable("audit_chain_checks", {
  chain: varchar("chain", { length: 64 }).primaryKey(),
  checkedAt: tstz("checked_at").notNull(),
  ok: boolean("ok").notNull(),
  report: jsonb("report").$type<Record<string, unknown>>().notNull(),
});

/** Ed25519 keys that sign chain anchors; the private key sealed under ENCRYPTION_KEYS (rule 8). */
export const auditSigningKeys = pgTable("audit_signing_keys", {
  kid: varchar("kid", { length: 64 }).primaryKey(),
  publicKey: text("public_key").notNull(),
  privateKeySealed: text("private_key_sealed").notNull(),
  createdAt: createdAt(),
});
