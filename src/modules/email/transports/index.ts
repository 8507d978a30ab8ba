import type { Config } from "../../../config/index.js";
import type { Logger } from "../../../infra/logger.js";
import { createLogTransport } from "./log.transport.js";
import { createResendTransport } from "./resend.transport.js";
import { createSendgridTransport } from "./sendgrid.transport.js";
import { createSmtpTransport } from "./smtp.transport.js";
import type { EmailTransport } from "./transport.js";

/** The delivery provider EMAIL_PROVIDER names. */
export function createEmailTransport(config: Config, logger: Logger): EmailTransport {
  switch (config.email.provider) {
    case "smtp":
      return createSmtpTransport(config.email.smtp);
    case "resend":
      return createResendTransport(config.email.resend);
    case "sendgrid":
      return createSendgridTransport(config.email.sendgrid);
    default:
      return createLogTransport(logger, config.isDevelopment);
  }
}
