import type { Clock } from "../../infra/clock.js";
import type { Db } from "../../infra/db.js";
import type { Logger } from "../../infra/logger.js";
import type { SecretBox } from "../../lib/crypto/index.js";
import type { AuditService } from "../audit/index.js";
import { EmailService } from "./email.service.js";
import { OutboxAdminService } from "./outbox-admin.service.js";
import { OutboxStatsService } from "./outbox-stats.service.js";
import { EmailRenderer, type Brand } from "./render.js";
import type { EmailTransport } from "./transports/transport.js";

export { createEmailTransport } from "./transports/index.js";
export type { EmailService } from "./email.service.js";
export type { EmailTransport } from "./transports/transport.js";
export { outboxListSchema } from "./outbox-admin.service.js";
export { compileAll } from "./compile.js";
export { COMPILED_EMAILS } from "./render.js";

export interface EmailModuleDeps {
  db: Db;
  clock: Clock;
  box: SecretBox;
  logger: Logger;
  audit: AuditService;
  transport: EmailTransport;
  brand: Brand;
  from: string;
  maxAttempts: number;
}

/** Email through the outbox: enqueue inside business transactions, a worker sends; superadmins watch it. */
export function createEmailModule(deps: EmailModuleDeps) {
  const { db, clock, box, logger, audit, transport } = deps;
  const email = new EmailService({ db, clock, box, logger, transport, renderer: new EmailRenderer(deps.brand), from: deps.from, maxAttempts: deps.maxAttempts });
  return { email, outbox: new OutboxAdminService(db, clock, audit), outboxStats: new OutboxStatsService(db, clock) };
}

export type EmailModule = ReturnType<typeof createEmailModule>;
