import type { Clock } from "../../infra/clock.js";
import type { Db } from "../../infra/db.js";
import { isUniqueViolation } from "../../infra/db-errors.js";
import { checkClaimableDomain, emailDomain } from "../../lib/domain-names.js";
import { randomToken } from "../../lib/crypto/index.js";
import { CommonErrors } from "../../lib/errors.js";
import { systemContext, type RequestContext, type UserActor } from "../../lib/request-context.js";
import { parseId, parseInput } from "../../lib/validation.js";
import { AccessErrors, requireOrgAccess, requireUser } from "../access/index.js";
import { AuditAction, type AuditService } from "../audit/index.js";
import type { RateLimitService, RateRule } from "../rate-limit/index.js";
import { challengeName, challengeValue, type ChallengeLookupFn } from "./dns-txt.js";
import { DomainErrors } from "./domains.errors.js";
import { domainsRepository as repo, type DomainRow, type DomainStatus } from "./domains.repository.js";
import { addDomainSchema, type AddDomainInput } from "./domains.schemas.js";

/** A domain as its organization's admins see it, with the record that proves it. */
export interface DomainView {
  id: string;
  organizationId: string;
  domain: string;
  status: DomainStatus;
  /** Where the TXT record goes (`_keyward-verification.<domain>`) and what it must say. */
  recordName: string;
  recordValue: string;
  verifiedAt: Date | null;
  lastCheckedAt: Date | null;
  /** Why the last check did not find the record; null when it did (or none ran yet). */
  lastCheckError: string | null;
  nextCheckAt: Date | null;
  createdBy: string | null;
  createdAt: Date;
}

export interface DomainsSettings {
  recheckIntervalMs: number;
  lapseAfter: number;
  verifyRate: RateRule;
}

const VERIFIED_UQ = "organization_domains_verified_uq";
const ORG_DOMAIN_UQ = "organization_domains_org_domain_uq";
/** How long a claimed re-check may take before another instance may take it over. */
const RECHECK_LEASE_MS = 10 * 60 * 1000;
const RECHECK_BATCH = 100;

const toView = (r: DomainRow): DomainView => ({
  id: r.id,
  organizationId: r.organizationId,
  domain: r.domain,
  status: r.status as DomainStatus,
  recordName: challengeName(r.domain),
  recordValue: challengeValue(r.verificationToken),
  verifiedAt: r.verifiedAt,
  lastCheckedAt: r.lastCheckedAt,
  lastCheckError: r.lastCheckError,
  nextCheckAt: r.nextCheckAt,
  createdBy: r.createdBy,
  createdAt: r.createdAt,
});

const audited = (r: DomainRow, metadata: Record<string, unknown> = {}) => ({
  organizationId: r.organizationId,
  resourceType: "organization_domain",
  resourceId: r.id,
  metadata: { domain: r.domain, ...metadata },
});

/**
 * Verified domains (issue 35): an organization proves it holds a domain by a DNS TXT record, and
 * keeps proving it (a periodic re-check lapses a domain whose record is gone). A domain is verified
 * for one organization at most; sign-in routing asks `findVerifiedOrganizationForEmail`.
 */
export class DomainsService {
  constructor(
    private readonly db: Db,
    private readonly clock: Clock,
    private readonly audit: AuditService,
    private readonly limits: RateLimitService,
    private readonly lookup: ChallengeLookupFn,
    private readonly settings: DomainsSettings,
  ) {}

  async list(ctx: RequestContext, orgId: string): Promise<DomainView[]> {
    const { orgId: id } = await this.access(ctx, orgId);
    return (await repo.listForOrganization(this.db, id)).map(toView);
  }

  /** Claims a domain (pending) and returns the TXT record that will prove it. */
  async add(ctx: RequestContext, orgId: string, input: AddDomainInput): Promise<DomainView> {
    const { orgId: id, actor } = await this.access(ctx, orgId);
    const { domain: typed } = parseInput(addDomainSchema, input);
    const checked = checkClaimableDomain(typed);
    if (!checked.ok) {
      // A malformed name is a validation error; a well-formed one that nobody may claim says why.
      if (checked.problem === "invalid" || checked.problem === "too_long") throw CommonErrors.validation([{ path: "domain", message: checked.message }]);
      throw DomainErrors.notClaimable(checked.problem, checked.message);
    }
    return this.db.transaction(async (tx) => {
      // A fresh token per claim: a record published for an earlier claim proves nothing about this one.
      const row = await repo.insert(tx, { organizationId: id, domain: checked.domain, verificationToken: randomToken(24), createdBy: actor.userId, now: this.clock.now() }).catch((e: unknown) => {
        throw isUniqueViolation(e, ORG_DOMAIN_UQ) ? DomainErrors.exists() : e;
      });
      await this.audit.record(tx, ctx, AuditAction.domainAdded, audited(row));
      return toView(row);
    });
  }

  /**
   * Looks the challenge up now. Found: the domain is verified (unless another organization holds it
   * verified: 409). Not found: it stays as it was, with the reason in `lastCheckError`.
   */
  async verify(ctx: RequestContext, orgId: string, domainId: string): Promise<DomainView> {
    const { orgId: id } = await this.access(ctx, orgId);
    const did = parseId(domainId, DomainErrors.notFound);
    const row = await repo.find(this.db, id, did);
    if (!row) throw DomainErrors.notFound();
    // Each lookup asks an outside server: an organization cannot make Keyward hammer one.
    await this.limits.consume("domain-verify", this.settings.verifyRate, id);
    // Asked outside any transaction: no row stays locked while DNS answers.
    const result = await this.lookup(row.domain, row.verificationToken);
    return this.db.transaction(async (tx) => {
      const current = await repo.findForUpdate(tx, did);
      // Removed (or claimed anew with another token) while DNS answered: this lookup proves nothing of it.
      if (!current || current.organizationId !== id || current.verificationToken !== row.verificationToken) throw DomainErrors.notFound();
      const now = this.clock.now();
      if (!result.found) {
        const updated = await repo.update(tx, did, { lastCheckedAt: now, lastCheckError: result.reason, updatedAt: now });
        await this.audit.record(tx, ctx, AuditAction.domainVerifyFailed, { ...audited(updated, { reason: result.reason }), success: false });
        return toView(updated);
      }
      const good = { lastCheckedAt: now, lastCheckError: null, consecutiveFailures: 0, nextCheckAt: new Date(now.getTime() + this.settings.recheckIntervalMs), updatedAt: now };
      // Already verified (a parallel request got here first, or a re-check on demand): nothing new to record.
      if (current.status === "verified") return toView(await repo.update(tx, did, good));
      // A deleted organization's claims hold nothing: release them before asking who holds the name.
      for (const released of await repo.releaseFromDeletedOrganizations(tx, current.domain, now)) {
        await this.audit.record(tx, systemContext("domain-release"), AuditAction.domainRemoved, audited(released, { status: released.status, reason: "organization deleted" }));
      }
      // A domain belongs to one organization at most (the unique index settles a race between two).
      if (await repo.verifiedElsewhere(tx, current.domain, id)) throw DomainErrors.alreadyVerified();
      const updated = await repo.update(tx, did, { ...good, status: "verified", verifiedAt: now }).catch((e: unknown) => {
        throw isUniqueViolation(e, VERIFIED_UQ) ? DomainErrors.alreadyVerified() : e;
      });
      await this.audit.record(tx, ctx, AuditAction.domainVerified, audited(updated, { previousStatus: current.status }));
      return toView(updated);
    });
  }

  /** Removes the claim (verified or not): addresses in the domain no longer route to the organization. */
  async remove(ctx: RequestContext, orgId: string, domainId: string): Promise<DomainView> {
    const { orgId: id } = await this.access(ctx, orgId);
    const did = parseId(domainId, DomainErrors.notFound);
    return this.db.transaction(async (tx) => {
      const row = await repo.softDelete(tx, id, did, this.clock.now());
      if (!row) throw DomainErrors.notFound();
      await this.audit.record(tx, ctx, AuditAction.domainRemoved, audited(row, { status: row.status }));
      return toView(row);
    });
  }

  /** Sign-in routing: the organization that holds the address's domain verified, or null. */
  async findVerifiedOrganizationForEmail(email: string): Promise<string | null> {
    const domain = emailDomain(email);
    return domain ? repo.verifiedOwner(this.db, domain) : null;
  }

  /**
   * The periodic re-check (the `domain-recheck` job): every verified domain whose next check is due
   * is looked up again; a record missing on `lapseAfter` checks in a row lapses the domain. Lookups
   * that fail (timeout, SERVFAIL) say nothing about the record and do not count. Returns the number checked.
   */
  async recheckDue(): Promise<number> {
    const now = this.clock.now();
    const due = await repo.claimDue(this.db, now, new Date(now.getTime() + RECHECK_LEASE_MS), RECHECK_BATCH);
    for (const row of due) await this.recheck(row);
    return due.length;
  }

  private async recheck(row: DomainRow): Promise<void> {
    const result = await this.lookup(row.domain, row.verificationToken);
    const ctx = systemContext("domain-recheck");
    await this.db.transaction(async (tx) => {
      const current = await repo.findForUpdate(tx, row.id);
      // Removed, lapsed or re-claimed meanwhile: this lookup is about a state that is gone.
      if (!current || current.status !== "verified" || current.verificationToken !== row.verificationToken) return;
      const now = this.clock.now();
      const next = new Date(now.getTime() + this.settings.recheckIntervalMs);
      if (result.found) {
        await repo.update(tx, row.id, { lastCheckedAt: now, lastCheckError: null, consecutiveFailures: 0, nextCheckAt: next, updatedAt: now });
        return;
      }
      if (!result.definitive) {
        await repo.update(tx, row.id, { lastCheckedAt: now, lastCheckError: result.reason, nextCheckAt: next, updatedAt: now });
        return;
      }
      const failures = current.consecutiveFailures + 1;
      const lapses = failures >= this.settings.lapseAfter;
      const updated = await repo.update(tx, row.id, {
        lastCheckedAt: now,
        lastCheckError: result.reason,
        consecutiveFailures: failures,
        ...(lapses ? { status: "lapsed", nextCheckAt: null } : { nextCheckAt: next }),
        updatedAt: now,
      });
      await this.audit.record(tx, ctx, lapses ? AuditAction.domainLapsed : AuditAction.domainRecheckFailed, {
        ...audited(updated, { reason: result.reason, consecutiveFailures: failures }),
        success: false,
      });
    });
  }

  /**
   * Guard order: signed in; superadmins (operators need not be members) reach a live organization;
   * everyone else through the access core, as an owner or admin of that organization.
   */
  private async access(ctx: RequestContext, orgId: unknown): Promise<{ orgId: string; actor: UserActor }> {
    const actor = requireUser(ctx);
    if (actor.isSuperadmin && !actor.delegation) {
      const id = parseId(orgId, AccessErrors.orgNotFound);
      if (!(await repo.organizationIsLive(this.db, id))) throw AccessErrors.orgNotFound();
      return { orgId: id, actor };
    }
    const access = await requireOrgAccess(this.db, ctx, orgId, "domains.manage");
    return { orgId: access.orgId, actor: access.actor };
  }
}
