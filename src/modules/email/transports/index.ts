import type { Config } from "../../../config/index.js";
import type { Logger } from "../../../infra/logger.js";
import { createLogTransport } from "./log.transport.js";
import type { EmailTransport } from "./transport.js";

/**
 * A provider's transport, loaded with the first message it sends: each SDK is a few MB of heap
 * (SendGrid's with axios about 5, nodemailer about 5) that an instance sending through another
 * provider, or not yet sending, need not hold. A failed load is tried again with the next message.
 */
function loadedOnFirstSend(name: string, load: () => Promise<EmailTransport>): EmailTransport {
  let loading: Promise<EmailTransport> | undefined;
  const transport = () => {
    loading ??= load();
    loading.catch(() => (loading = undefined));
    return loading;
  };
  return {
    name,
    send: async (message) => (await transport()).send(message),
    close: async () => {
      if (loading) await (await loading.catch(() => undefined))?.close?.();
    },
  };
}

/** The delivery provider EMAIL_PROVIDER names. */
export function createEmailTransport(config: Config, logger: Logger): EmailTransport {
  switch (config.email.provider) {
    case "smtp":
      return loadedOnFirstSend("smtp", async () => (await import("./smtp.transport.js")).createSmtpTransport(config.email.smtp));
    case "resend":
      return loadedOnFirstSend("resend", async () => (await import("./resend.transport.js")).createResendTransport(config.email.resend));
    case "sendgrid":
      return loadedOnFirstSend("sendgrid", async () => (await import("./sendgrid.transport.js")).createSendgridTransport(config.email.sendgrid));
    default:
      return createLogTransport(logger, config.isDevelopment);
  }
}
