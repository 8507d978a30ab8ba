import { z } from "zod";
import type { Clock } from "../../../infra/clock.js";
import type { Db, Executor } from "../../../infra/db.js";
import type { Logger } from "../../../infra/logger.js";
import { type RequestContext, systemContext } from "../../../lib/request-context.js";
import { paginationSchema } from "../../../lib/pagination.js";
import { parseId, parseInput } from "../../../lib/validation.js";
import { AuditAction, type AuditService } from "../../audit/index.js";
import { mfaRepository } from "./mfa.repository.js";
import type { MfaHooks } from "./mfa.service.js";
import type { EmailService } from "../../email/index.js";
import { complianceRepository, securityPolicyRepository, type ComplianceStatus } from "./mfa-policy.repository.js";
import { AccessErrors, getActiveMemberships, requireOrgAccess, requireUser } from "../../access/index.js";

const DAY = 86_400_000;
/** The original API's paging of the compliance list (page_size, where other lists say per_page). */
export const compliancePageSchema = z.object({
  page: paginationSchema.shape.page,
  pageSize: paginationSchema.shape.perPage,
});
export type CompliancePageInput = z.input<typeof compliancePageSchema>;

const withStatus = <T extends { status: ComplianceStatus | null }>(r: T) => ({ ...r, status: r.status ?? ("not_applicable" as const) });

export const policySchema = z.object({
  mfaPolicyMode: z.enum(["disabled", "optional", "required"]),
  mfaGracePeriodDays: z.number().int().min(0).max(365).default(14),
  notifyDaysBefore: z.number().int().min(0).max(365).default(7),
});
export type PolicyInput = z.input<typeof policySchema>;

type Step = "notice" | "final";

/**
 * Organization MFA policy. Under "required", every member gets a deadline (now + grace); members
 * without MFA get reminders before it (one email per step: `notify_days_before` days ahead, then
 * the day before) and are restricted once it passes, until they enroll.
 */
export class MfaPolicyService implements MfaHooks {
  constructor(
    private readonly db: Db,
    private readonly clock: Clock,
    private readonly audit: AuditService,
    private readonly email: EmailService,
    private readonly logger: Logger,
    private readonly config: { appUrl: string },
  ) {}

  async getPolicy(ctx: RequestContext, orgId: string) {
    const { orgId: id } = await requireOrgAccess(this.db, ctx, orgId, "org.read");
    return this.policy(this.db, id);
  }

  async putPolicy(ctx: RequestContext, orgId: string, input: PolicyInput) {
    const { orgId: id, actor } = await requireOrgAccess(this.db, ctx, orgId, "org.update");
    const data = parseInput(policySchema, input);
    return this.db.transaction(async (tx) => {
      const now = this.clock.now();
      const version = await securityPolicyRepository.upsert(tx, id, data, actor.userId, now);
      if (data.mfaPolicyMode === "required") await this.reconcileOrg(tx, id, version, data.mfaGracePeriodDays, now);
      else await complianceRepository.markAllNotApplicable(tx, id, now);
      await this.audit.record(tx, ctx, AuditAction.mfaPolicyUpdated, { organizationId: id, metadata: data });
      return { ...(await this.policy(tx, id)) };
    });
  }

  /** Each member's standing (admins). */
  async compliance(ctx: RequestContext, orgId: string) {
    const { orgId: id } = await requireOrgAccess(this.db, ctx, orgId, "members.manage");
    const rows = await complianceRepository.listMembers(this.db, id);
    return rows.map(withStatus);
  }

  /** One page of them, as the original API paged it (?page=&page_size=), with the total count. */
  async compliancePage(ctx: RequestContext, orgId: string, input: CompliancePageInput) {
    const { orgId: id } = await requireOrgAccess(this.db, ctx, orgId, "members.manage");
    const q = parseInput(compliancePageSchema, input);
    const [rows, total] = await Promise.all([
      complianceRepository.listMembers(this.db, id, { limit: q.pageSize, offset: (q.page - 1) * q.pageSize }),
      complianceRepository.countMembers(this.db, id),
    ]);
    return { items: rows.map(withStatus), count: total, page: q.page, pageSize: q.pageSize };
  }

  /** The signed-in user's standing in each organization. */
  async myCompliance(ctx: RequestContext) {
    const actor = requireUser(ctx);
    const orgs = await getActiveMemberships(this.db, actor.userId);
    const rows = await complianceRepository.ofUser(this.db, actor.userId, orgs.map((o) => o.organizationId));
    return orgs.map((o) => {
      const r = rows.find((x) => x.organizationId === o.organizationId);
      return { organizationId: o.organizationId, organizationName: o.organizationName, status: r?.status ?? "not_applicable", deadlineAt: r?.deadlineAt ?? null };
    });
  }

  /** An admin nudges one member now (outside the schedule). */
  async sendReminder(ctx: RequestContext, orgId: string, userId: string): Promise<{ sent: boolean }> {
    const { orgId: id } = await requireOrgAccess(this.db, ctx, orgId, "members.manage");
    const target = parseId(userId, AccessErrors.memberNotFound);
    return this.db.transaction(async (tx) => {
      const row = await complianceRepository.find(tx, target, id);
      if (!row) throw AccessErrors.memberNotFound();
      if (row.status !== "in_grace" && row.status !== "past_due") return { sent: false };
      await this.remind(tx, ctx, target, id, row.deadlineAt ?? this.clock.now(), null);
      return { sent: true };
    });
  }

  /**
   * The scheduled pass (one instance at a time, under an advisory lock): new members get their
   * deadline, reminders go out once per step, and members past their deadline are restricted.
   */
  async runCompliance(): Promise<{ reminders: number; restricted: number } | null> {
    return this.db.transaction(async (tx) => {
      if (!(await securityPolicyRepository.tryLockCompliancePass(tx))) return null;
      const now = this.clock.now();
      const ctx = systemContext("mfa-compliance-job");
      let reminders = 0;
      let restricted = 0;
      const policies = await securityPolicyRepository.listRequired(tx);
      for (const p of policies) {
        await this.reconcileOrg(tx, p.organizationId, p.version, p.grace, now);
        const rows = await complianceRepository.listOpen(tx, p.organizationId);
        for (const row of rows) {
          const deadline = row.deadlineAt ?? now;
          if (row.status === "in_grace" && now >= deadline) {
            await complianceRepository.markPastDue(tx, row.userId, row.organizationId, now);
            await this.audit.record(tx, ctx, AuditAction.mfaPastDue, { userId: row.userId, organizationId: row.organizationId });
            restricted++;
            continue;
          }
          if (row.status !== "in_grace") continue;
          const due: Step | null =
            now.getTime() >= deadline.getTime() - DAY && !row.remindersSent.includes("final")
              ? "final"
              : now.getTime() >= deadline.getTime() - p.notify * DAY && !row.remindersSent.includes("notice") && !row.remindersSent.includes("final")
                ? "notice"
                : null;
          if (due) {
            await this.remind(tx, ctx, row.userId, row.organizationId, deadline, due);
            reminders++;
          }
        }
      }
      if (reminders || restricted) this.logger.info({ reminders, restricted }, "MFA compliance pass");
      return { reminders, restricted };
    });
  }

  /** Hook: the user enrolled a method, so every in-grace or past-due standing becomes compliant. */
  async enrolled(tx: Executor, userId: string): Promise<void> {
    const now = this.clock.now();
    const orgIds = await complianceRepository.markCompliant(tx, userId, now);
    for (const organizationId of orgIds) await this.audit.record(tx, systemContext("mfa"), AuditAction.mfaCompliant, { userId, organizationId });
  }

  /** Hook: the user removed a method; with none left, compliance falls back to the original deadline. */
  async removed(tx: Executor, userId: string): Promise<void> {
    const m = await mfaRepository.methods(tx, userId);
    if (m.webauthn > 0 || m.totp) return;
    await complianceRepository.reopenCompliant(tx, userId, this.clock.now());
  }

  private async policy(db: Executor, orgId: string) {
    const row = await securityPolicyRepository.find(db, orgId);
    return {
      organizationId: orgId,
      mfaPolicyMode: row?.mfaPolicyMode ?? "optional",
      mfaGracePeriodDays: row?.mfaGracePeriodDays ?? 14,
      notifyDaysBefore: row?.notifyDaysBefore ?? 7,
      policyVersion: row?.policyVersion ?? 0,
    };
  }

  /** Gives every member without a standing (or with a stale one) their status under the policy. */
  private async reconcileOrg(tx: Executor, orgId: string, version: number, graceDays: number, now: Date): Promise<void> {
    const members = await complianceRepository.listMemberStandings(tx, orgId);
    for (const m of members) {
      if (m.status && m.status !== "not_applicable" && m.policyVersion === version) continue;
      if (m.status === "in_grace" || m.status === "past_due" || m.status === "compliant") {
        if (m.policyVersion !== version) await complianceRepository.setPolicyVersion(tx, m.userId, orgId, version);
        continue;
      }
      const methods = await mfaRepository.methods(tx, m.userId);
      const has = methods.webauthn > 0 || methods.totp;
      await complianceRepository.upsert(tx, m.userId, orgId, {
        status: has ? "compliant" : "in_grace",
        policyVersion: version,
        deadlineAt: new Date(now.getTime() + graceDays * DAY),
        compliantAt: has ? now : null,
        remindersSent: [],
        updatedAt: now,
      });
    }
  }

  private async remind(tx: Executor, ctx: RequestContext, userId: string, orgId: string, deadline: Date, step: Step | null): Promise<void> {
    const now = this.clock.now();
    const recipient = await complianceRepository.reminderRecipient(tx, userId, orgId);
    if (!recipient) return;
    await this.email.enqueue(tx, "mfa-deadline-reminder", recipient.email, {
      name: recipient.fullName ?? recipient.email,
      organizationName: recipient.organizationName,
      deadline: deadline.toISOString().slice(0, 10),
      daysLeft: Math.max(0, Math.ceil((deadline.getTime() - now.getTime()) / DAY)),
      enrollUrl: `${this.config.appUrl}/account/security`,
    });
    await complianceRepository.markNotified(tx, userId, orgId, now, step);
    await this.audit.record(tx, ctx, AuditAction.mfaReminderSent, { userId, organizationId: orgId, metadata: { step: step ?? "manual" } });
  }
}
