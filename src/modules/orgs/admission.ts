import type { Executor } from "../../infra/db.js";
import type { Logger } from "../../infra/logger.js";
import { userAccounts } from "../users/index.js";
import { assertBelowOrgLimit, type OrgLimitConfig } from "./org-limit.js";
import { OrgErrors } from "./orgs.errors.js";

export interface AdmissionConfig extends OrgLimitConfig {
  /** REQUIRE_VERIFIED_EMAIL: only an account with a proven address creates or joins an organization. */
  requireVerifiedEmail: boolean;
}

/**
 * The one door to a membership, and what an unproven address may do (README, "Unverified
 * accounts"): it signs in and looks after its own account, and does nothing in an organization.
 * Creating an organization (an external sign-up's personal one too) and accepting an invitation
 * pass here, under the user's row lock, just before the membership is written; every right in an
 * organization (its CAs, certificates, networks, keys) follows from that membership.
 */
export async function admitMember(tx: Executor, userId: string, config: AdmissionConfig, logger: Logger): Promise<void> {
  // A mistyped address would own organizations and CAs and hold certificates, all of it taken by
  // whoever really holds the address and resets the password.
  if (config.requireVerifiedEmail && !(await userAccounts.find(tx, userId))?.emailVerifiedAt) throw OrgErrors.emailNotVerified();
  await assertBelowOrgLimit(tx, userId, config, logger);
}
