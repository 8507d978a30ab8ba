import sgClient from "@sendgrid/client";
import sgMail from "@sendgrid/mail";
import { PermanentEmailError, type EmailTransport } from "./transport.js";

const { Client } = sgClient as unknown as { Client: new () => sgClient.Client };
const { MailService } = sgMail as unknown as { MailService: new () => typeof sgMail };

/** Parses "Name <addr>" into SendGrid's {email, name}. */
function address(value: string): { email: string; name?: string } {
  const m = /^\s*(.*?)\s*<([^>]+)>\s*$/.exec(value);
  return m ? { email: m[2]!, ...(m[1] ? { name: m[1].replace(/^"|"$/g, "") } : {}) } : { email: value.trim() };
}

/**
 * SendGrid v3 mail/send through its official SDK. SendGrid has no idempotency key: the outbox's
 * claim-before-send is what keeps a message from going twice; the outbox id travels in custom_args.
 */
export function createSendgridTransport(options: { apiKey: string; baseUrl: string }): EmailTransport {
  const client = new Client();
  client.setApiKey(options.apiKey);
  // After setApiKey, which resets the base URL to the region host.
  client.setDefaultRequest("baseUrl", options.baseUrl.replace(/\/+$/, ""));
  const mail = new MailService();
  mail.setClient(client);
  return {
    name: "sendgrid",
    async send(message) {
      try {
        const [response] = await mail.send({
          from: address(message.from),
          to: message.to,
          subject: message.subject,
          text: message.text,
          html: message.html,
          customArgs: { keyward_outbox_id: message.idempotencyKey },
        });
        return { messageId: (response.headers["x-message-id"] as string | undefined) ?? null };
      } catch (e) {
        const status = (e as { code?: number }).code;
        const body = JSON.stringify((e as { response?: { body?: unknown } }).response?.body ?? {});
        // 400 (validation) and 413 are about this message; auth, rate limits and outages pass.
        if (status === 400 || status === 413) throw new PermanentEmailError(`${status} ${body}`);
        throw new Error(`${status ?? "network"} ${(e as Error).message} ${body}`);
      }
    },
  };
}
