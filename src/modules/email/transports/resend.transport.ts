import { Resend } from "resend";
import { PermanentEmailError, type EmailTransport } from "./transport.js";

/** Resend (https://resend.com/docs/api-reference/emails/send-email), with its idempotency key. */
export function createResendTransport(options: { apiKey: string; baseUrl: string }): EmailTransport {
  const client = new Resend(options.apiKey, { baseUrl: options.baseUrl.replace(/\/+$/, "") });
  return {
    name: "resend",
    async send(message) {
      const { data, error } = await client.emails.send(
        { from: message.from, to: [message.to], subject: message.subject, html: message.html, text: message.text },
        // Resend drops a repeat with the same key for 24 h: a retry after a lost answer sends nothing twice.
        { idempotencyKey: message.idempotencyKey },
      );
      if (error) {
        const status = (error as { statusCode?: number | null }).statusCode ?? null;
        const text = `${error.name}: ${error.message}`;
        // The request itself is wrong (bad recipient, bad sender, bad payload): retrying will not help.
        if (status === 400 || status === 422 || (status === 409 && error.name === "invalid_idempotent_request")) throw new PermanentEmailError(text);
        throw new Error(`${status ?? "network"} ${text}`);
      }
      return { messageId: data?.id ?? null };
    },
  };
}
