import { index, pgTable, text, varchar } from "drizzle-orm/pg-core";
import { createdAt, id } from "./_columns.js";

/** Public contact-form submissions, stored sanitised (tags stripped, entities escaped). */
export const contactSubmissions = pgTable(
  "contact_submissions",
  {
    id: id(),
    name: varchar("name", { length: 200 }).notNull(),
    email: varchar("email", { length: 320 }).notNull(),
    subject: varchar("subject", { length: 300 }).notNull(),
    message: text("message").notNull(),
    ipAddress: varchar("ip_address", { length: 45 }),
    userAgent: text("user_agent"),
    createdAt: createdAt(),
  },
  (t) => [index("contact_submissions_created_idx").on(t.createdAt)],
);
