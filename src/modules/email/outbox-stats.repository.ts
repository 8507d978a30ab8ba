import { count, min, ne } from "drizzle-orm";
import { emailOutbox } from "../../../schema/index.js";
import type { Executor } from "../../infra/db.js";

export const outboxStatsRepository = {
  /** Messages not yet sent, per status, with the oldest creation time (the status index serves it). */
  unsentByStatus: (db: Executor) =>
    db
      .select({ status: emailOutbox.status, n: count(), oldest: min(emailOutbox.createdAt) })
      .from(emailOutbox)
      .where(ne(emailOutbox.status, "sent"))
      .groupBy(emailOutbox.status),
};
