import { index, integer, pgEnum, pgTable, text, varchar } from "drizzle-orm/pg-core";
import { createdAt, id, tstz, updatedAt } from "./_columns.js";

export const emailStatus = pgEnum("email_status", ["pending", "sent", "failed", "dead"]);

/**
 * The outbox: written in the caller's transaction, drained by workers that claim rows with
 * FOR UPDATE SKIP LOCKED. Template props carry links with tokens, so they are stored encrypted.
 */
export const emailOutbox = pgTable(
  "email_outbox",
  {
    id: id(),
    template: varchar("template", { length: 64 }).notNull(),
    toAddress: varchar("to_address", { length: 320 }).notNull(),
    propsSealed: text("props_sealed").notNull(),
    status: emailStatus("status").notNull().default("pending"),
    attempts: integer("attempts").notNull().default(0),
    nextAttemptAt: tstz("next_attempt_at").notNull().defaultNow(),
    lockedUntil: tstz("locked_until"),
    lastError: text("last_error"),
    provider: varchar("provider", { length: 32 }),
    providerMessageId: varchar("provider_message_id", { length: 255 }),
    sentAt: tstz("sent_at"),
    createdAt: createdAt(),
    updatedAt: updatedAt(),
  },
  (t) => [index("email_outbox_due_idx").on(t.status, t.nextAttemptAt)],
);
