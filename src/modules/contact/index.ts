import type { Clock } from "../../infra/clock.js";
import type { Db } from "../../infra/db.js";
import type { EmailService } from "../email/index.js";
import type { RateLimitService, RateRule } from "../rate-limit/index.js";
import { ContactService } from "./contact.service.js";

export { CONTACT_ACCEPTED, ContactSchema, type ContactService } from "./contact.service.js";

/** The public contact form. */
export function createContactModule(deps: { db: Db; clock: Clock; email: EmailService; limits: RateLimitService; config: { notifyEmail: string; rate: RateRule } }) {
  return { contact: new ContactService(deps.db, deps.clock, deps.email, deps.limits, deps.config) };
}

export type ContactModule = ReturnType<typeof createContactModule>;
