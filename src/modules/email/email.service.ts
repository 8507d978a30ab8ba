import type { Clock } from "../../infra/clock.js";
import type { Db, Executor } from "../../infra/db.js";
import type { Logger } from "../../infra/logger.js";
import { type SecretBox, sealContexts, randomIntBetween } from "../../lib/crypto/index.js";
import { outboxRepository } from "./outbox.repository.js";
import { claimDueEmailsPrivileged, type ClaimedEmail } from "./outbox.secrets.repository.js";
import type { EmailRenderer } from "./render.js";
import type { TemplateName, TemplateProps } from "./templates.js";
import { PermanentEmailError, type EmailTransport } from "./transports/transport.js";

const SEAL_CONTEXT = sealContexts.emailOutbox();
const LEASE_SECONDS = 120;
const BACKOFF_BASE_SECONDS = 30;
const BACKOFF_MAX_SECONDS = 3600;

export interface EmailServiceDeps {
  db: Db;
  clock: Clock;
  box: SecretBox;
  renderer: EmailRenderer;
  transport: EmailTransport;
  logger: Logger;
  from: string;
  maxAttempts: number;
}

/** Retry delay after `attempts` failures: exponential with full jitter, capped. */
export function backoffSeconds(attempts: number): number {
  const ceiling = Math.min(BACKOFF_MAX_SECONDS, BACKOFF_BASE_SECONDS * 2 ** Math.max(0, attempts - 1));
  return Math.max(1, randomIntBetween(Math.floor(ceiling / 2), ceiling + 1));
}

/**
 * At-least-once email: `enqueue` writes an outbox row inside the caller's transaction (so an email
 * goes out if and only if the change commits); `drain` renders and sends due rows with retries.
 */
export class EmailService {
  constructor(private readonly deps: EmailServiceDeps) {}

  async enqueue<T extends TemplateName>(tx: Executor, template: T, to: string, props: TemplateProps[T]): Promise<void> {
    const { clock, box } = this.deps;
    await outboxRepository.insert(tx, {
      template,
      toAddress: to,
      propsSealed: box.encrypt(JSON.stringify(props), SEAL_CONTEXT),
      now: clock.now(),
    });
  }

  /** Sends every due message once (one batch at a time); returns how many were sent. */
  async drain(batchSize = 20): Promise<number> {
    let sent = 0;
    for (;;) {
      const batch = await claimDueEmailsPrivileged(this.deps.db, this.deps.clock.now(), batchSize, LEASE_SECONDS);
      if (batch.length === 0) return sent;
      for (const message of batch) if (await this.deliver(message)) sent++;
      if (batch.length < batchSize) return sent;
    }
  }

  private async deliver(message: ClaimedEmail): Promise<boolean> {
    const { db, clock, box, renderer, transport, logger, from, maxAttempts } = this.deps;
    try {
      const props = JSON.parse(box.decryptString(message.propsSealed, SEAL_CONTEXT));
      const rendered = await renderer.render(message.template as TemplateName, props);
      const result = await transport.send({ from, to: message.toAddress, ...rendered, idempotencyKey: message.id });
      await outboxRepository.markSent(db, message.id, clock.now(), transport.name, result.messageId);
      logger.info({ emailId: message.id, template: message.template, provider: transport.name }, "email sent");
      return true;
    } catch (e) {
      const error = e instanceof Error ? e.message : String(e);
      const now = clock.now();
      const permanent = e instanceof PermanentEmailError || (e as Error).name === "TemplateError";
      const status = permanent ? "failed" : message.attempts >= maxAttempts ? "dead" : "pending";
      const next = new Date(now.getTime() + backoffSeconds(message.attempts) * 1000);
      await outboxRepository.markFailed(db, message.id, now, status, next, error);
      logger.warn({ emailId: message.id, template: message.template, attempts: message.attempts, status, err: error }, "email delivery failed");
      return false;
    }
  }
}
