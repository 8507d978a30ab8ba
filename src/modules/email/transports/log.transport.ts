import type { Logger } from "../../../infra/logger.js";
import type { EmailTransport } from "./transport.js";

/**
 * The embedded default: the email is written to the log instead of being sent. The plain-text
 * body (with its links) is included only in development, where it is how a developer clicks them.
 */
export function createLogTransport(logger: Logger, includeBody: boolean): EmailTransport {
  return {
    name: "log",
    async send(message) {
      logger.info(
        { email: { to: message.to, subject: message.subject, ...(includeBody ? { body: message.text } : {}) } },
        "email written to the log (EMAIL_PROVIDER=log)",
      );
      return { messageId: null };
    },
  };
}
