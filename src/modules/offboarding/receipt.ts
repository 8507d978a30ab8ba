import type { OrgRole } from "../access/index.js";
import type { AuditEntryView } from "../audit/index.js";
import type { OffboardMode } from "./offboarding.schemas.js";

/** A list of what was cut: how many, and which. */
export interface CutList {
  count: number;
  ids: string[];
}

/**
 * What one offboarding cut, as its audit record (the receipt) holds it. Stored under names the
 * audit log's redaction leaves alone (it masks any key that looks like "token" or "api key").
 */
export interface ReceiptFacts {
  mode: OffboardMode;
  reason: string;
  role: OrgRole;
  /** The account is managed by this organization (its sessions and CLI tokens ended too). */
  managed: boolean;
  /** A managed account's suspension: sign-in refused until reinstated. */
  accountSuspended: boolean;
  sessions: CutList;
  /** Delegated CLI (OIDC) tokens, grants and codes ended. */
  cliGrants: { count: number };
  /** The organization API keys the person had created, revoked. */
  orgKeys: CutList;
  /** The unused host enrollment tokens the person had created, revoked (absent on receipts before it). */
  hostEnrollments?: CutList;
  certificates: CutList & { serials: string[] };
  /** Device memberships on this organization's networks, deauthorized. */
  devices: CutList;
  departments: CutList;
  principals: CutList;
  /**
   * Not done yet and being retried: devices whose controller did not answer (reconciliation
   * finishes them). The record says every device (written before the controller is tried); the
   * receipt as read says what the follow-up record found.
   */
  pending: { devices: string[] };
}

/** The follow-up record of a receipt with devices: what the controller took, and what is left to reconciliation. */
export interface DevicesOutcome {
  deauthorized: string[];
  pending: string[];
}

export interface OffboardingReceipt extends Omit<ReceiptFacts, "cliGrants" | "orgKeys" | "hostEnrollments"> {
  /** The receipt's id (its audit record's resource id). */
  id: string;
  /** The audit record that is the receipt (verified by the audit chain). */
  auditId: string;
  organizationId: string;
  userId: string;
  actorId: string | null;
  createdAt: Date;
  cliTokens: { count: number };
  apiKeys: CutList;
  enrollmentTokens: CutList;
}

export const cutList = (ids: string[]): CutList => ({ count: ids.length, ids });

/** The receipt as callers read it, from its audit record. */
export function receiptView(row: AuditEntryView): OffboardingReceipt {
  // The audit log adds who acted (`actor`: an API key, for SCIM) to the metadata: not a receipt field.
  const { cliGrants, orgKeys, hostEnrollments, actor: _actor, ...facts } = row.metadata as unknown as ReceiptFacts & { actor?: unknown };
  return {
    ...facts,
    id: row.resourceId ?? row.id,
    auditId: row.id,
    organizationId: row.organizationId ?? "",
    userId: row.userId ?? "",
    actorId: row.actorId,
    createdAt: row.createdAt,
    cliTokens: cliGrants,
    apiKeys: orgKeys,
    enrollmentTokens: hostEnrollments ?? cutList([]),
  };
}
