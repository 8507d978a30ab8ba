import { desc, gt, isNull, or, sql } from "drizzle-orm";
import { oidcSigningKeys } from "../../../schema/index.js";
import type { Executor } from "../../infra/db.js";

/**
 * Privileged (ARCHITECTURE rule 7): the sealed private JWKs of the published set (active keys
 * first, newest first, then retired keys inside their grace period). Only OidcSigningKeysService
 * imports this (eslint.config.js enforces it); it hands the unsealed keys to oidc-provider and
 * nowhere else.
 */
export const listPublishedSigningKeysPrivileged = (db: Executor, now: Date): Promise<Array<{ kid: string; sealed: string; retiredAt: Date | null }>> =>
  db
    .select({ kid: oidcSigningKeys.kid, sealed: oidcSigningKeys.privateJwkSealed, retiredAt: oidcSigningKeys.retiredAt })
    .from(oidcSigningKeys)
    .where(or(isNull(oidcSigningKeys.retiredAt), gt(oidcSigningKeys.expiresAt, now)))
    .orderBy(sql`${oidcSigningKeys.retiredAt} is not null`, desc(oidcSigningKeys.createdAt));
