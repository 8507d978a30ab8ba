import { z } from "zod";
import type { Clock } from "../../infra/clock.js";
import type { Db } from "../../infra/db.js";
import type { RequestContext } from "../../lib/request-context.js";
import { parseInput } from "../../lib/validation.js";
import type { EmailService } from "../email/index.js";
import type { RateLimitService, RateRule } from "../rate-limit/index.js";
import { contactRepository } from "./contact.repository.js";

/** The public form's fields. `website` is a honeypot: people never see it, bots fill it in. */
export const ContactSchema = z.object({
  name: z.string().trim().min(1).max(200),
  email: z.string().trim().max(320).pipe(z.email("must be a valid email address")),
  subject: z.string().trim().min(1).max(300),
  message: z.string().trim().min(1).max(5000),
  website: z.string().max(500).optional(),
});
export type ContactInput = z.input<typeof ContactSchema>;

export const CONTACT_ACCEPTED = "Thank you: your message was sent.";

/**
 * Tags stripped (script and style bodies too), what remains escaped. sanitize-html (with its HTML
 * parser and CSS tooling, about 2 MB of heap) loads with the first submission, not with the service.
 */
let sanitizer: Promise<typeof import("sanitize-html")> | undefined;
async function cleaner(): Promise<(value: string) => string> {
  const sanitizeHtml = (await (sanitizer ??= import("sanitize-html").then((m) => m.default))) as typeof import("sanitize-html");
  return (value) => sanitizeHtml(value, { allowedTags: [], allowedAttributes: {}, disallowedTagsMode: "discard" }).trim();
}

export class ContactService {
  constructor(
    private readonly db: Db,
    private readonly clock: Clock,
    private readonly email: EmailService,
    private readonly limits: RateLimitService,
    private readonly config: { notifyEmail: string; rate: RateRule },
  ) {}

  /**
   * Stores a submission and notifies CONTACT_NOTIFY_EMAIL. Limited per client address (shared
   * across instances). A filled honeypot gets the same answer and nothing is stored or sent.
   */
  async submit(ctx: RequestContext, input: ContactInput): Promise<{ message: string }> {
    await this.limits.consume("contact", this.config.rate, ctx.ip ?? "unknown");
    const data = parseInput(ContactSchema, input);
    if (data.website && data.website.trim() !== "") return { message: CONTACT_ACCEPTED };
    const clean = await cleaner();
    const fields = { name: clean(data.name), email: clean(data.email), subject: clean(data.subject), message: clean(data.message) };
    await this.db.transaction(async (tx) => {
      const now = this.clock.now();
      await contactRepository.insert(tx, { ...fields, ipAddress: ctx.ip?.slice(0, 45), userAgent: ctx.userAgent, createdAt: now });
      await this.email.enqueue(tx, "contact-notification", this.config.notifyEmail, { ...fields, submittedAt: now.toISOString() });
    });
    return { message: CONTACT_ACCEPTED };
  }
}
