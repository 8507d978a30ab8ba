import nodemailer from "nodemailer";
import { PermanentEmailError, type EmailTransport } from "./transport.js";

export interface SmtpOptions {
  host: string;
  port: number;
  secure: boolean;
  requireTls: boolean;
  username?: string;
  password?: string;
}

export function createSmtpTransport(options: SmtpOptions): EmailTransport {
  const transporter = nodemailer.createTransport({
    host: options.host,
    port: options.port,
    secure: options.secure,
    requireTLS: options.requireTls,
    ignoreTLS: !options.secure && !options.requireTls && ["127.0.0.1", "localhost", "::1"].includes(options.host),
    auth: options.username ? { user: options.username, pass: options.password } : undefined,
  });
  return {
    name: "smtp",
    async send(message) {
      try {
        const info = await transporter.sendMail({
          from: message.from,
          to: message.to,
          subject: message.subject,
          html: message.html,
          text: message.text,
          messageId: `<${message.idempotencyKey}@keyward>`,
        });
        return { messageId: info.messageId ?? null };
      } catch (e) {
        // 5xx replies (unknown mailbox, rejected sender) do not get better with retries.
        const code = (e as { responseCode?: number }).responseCode;
        if (code !== undefined && code >= 500 && code < 600) throw new PermanentEmailError((e as Error).message);
        throw e;
      }
    },
    close: async () => transporter.close(),
  };
}
