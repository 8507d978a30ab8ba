import { contactSubmissions } from "../../../schema/index.js";
import type { Executor } from "../../infra/db.js";

export type ContactSubmissionInsert = Pick<typeof contactSubmissions.$inferInsert, "name" | "email" | "subject" | "message" | "ipAddress" | "userAgent" | "createdAt">;

/** Contact-form submissions: written once, read by people, never by the API. */
export const contactRepository = {
  async insert(db: Executor, values: ContactSubmissionInsert): Promise<void> {
    await db.insert(contactSubmissions).values(values);
  },
};
