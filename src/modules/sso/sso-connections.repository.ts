import { and, eq, inArray, isNotNull, sql } from "drizzle-orm";
import { organizationDomains, ssoConnections, ssoIdentities } from "../../../schema/index.js";
import { pickColumns } from "../../infra/columns.js";
import type { Executor } from "../../infra/db.js";
import { idInOrg } from "../../infra/org-scope.js";
import { live } from "../../infra/soft-delete.js";

/** Every column but the sealed secret (that one only sso-connections.secrets.repository.ts reads). */
export const connectionColumns = pickColumns(ssoConnections, [
  "id",
  "organizationId",
  "kind",
  "name",
  "enabled",
  "defaultRole",
  "groupMappings",
  "requireSso",
  "sessionMaxAgeSeconds",
  "config",
  "createdBy",
  "createdAt",
  "updatedAt",
]);
export type ConnectionRow = Pick<typeof ssoConnections.$inferSelect, keyof typeof connectionColumns> & { hasSecret: boolean };

const selection = { ...connectionColumns, hasSecret: sql<boolean>`${isNotNull(ssoConnections.secretSealed)}` };

export type NewConnection = Omit<typeof ssoConnections.$inferInsert, "deletedAt">;
export type ConnectionChanges = Partial<Omit<NewConnection, "id" | "organizationId" | "kind" | "createdBy" | "createdAt">>;

export const ssoConnectionsRepository = {
  listForOrganization: (db: Executor, orgId: string): Promise<ConnectionRow[]> =>
    db.select(selection).from(ssoConnections).where(and(eq(ssoConnections.organizationId, orgId), live(ssoConnections))).orderBy(ssoConnections.createdAt),

  async find(db: Executor, orgId: string, id: string): Promise<ConnectionRow | undefined> {
    const [row] = await db.select(selection).from(ssoConnections).where(and(idInOrg(ssoConnections, orgId, id), live(ssoConnections)));
    return row;
  },

  async findById(db: Executor, id: string): Promise<ConnectionRow | undefined> {
    const [row] = await db.select(selection).from(ssoConnections).where(and(eq(ssoConnections.id, id), live(ssoConnections)));
    return row;
  },

  /** The organization's enabled connection used for home-realm discovery (the oldest when several). */
  async findEnabledForOrganization(db: Executor, orgId: string): Promise<ConnectionRow | undefined> {
    const [row] = await db
      .select(selection)
      .from(ssoConnections)
      .where(and(eq(ssoConnections.organizationId, orgId), eq(ssoConnections.enabled, true), live(ssoConnections)))
      .orderBy(ssoConnections.createdAt)
      .limit(1);
    return row;
  },

  /**
   * The enabled connections of these organizations as a member sees them (name and kind, never their
   * configuration), each with when this person's identity there was linked (null: not linked).
   */
  listEnabledForMember: (db: Executor, orgIds: string[], userId: string) =>
    orgIds.length === 0
      ? Promise.resolve([])
      : db
          .select({ id: ssoConnections.id, organizationId: ssoConnections.organizationId, name: ssoConnections.name, kind: ssoConnections.kind, linkedAt: ssoIdentities.createdAt })
          .from(ssoConnections)
          .leftJoin(ssoIdentities, and(eq(ssoIdentities.connectionId, ssoConnections.id), eq(ssoIdentities.userId, userId)))
          .where(and(inArray(ssoConnections.organizationId, orgIds), eq(ssoConnections.enabled, true), live(ssoConnections)))
          .orderBy(ssoConnections.name, ssoConnections.id),

  /** An enabled connection that requires SSO, of the organization holding this domain verified. */
  async findRequiringForDomain(db: Executor, domain: string): Promise<{ id: string; organizationId: string } | undefined> {
    const [row] = await db
      .select({ id: ssoConnections.id, organizationId: ssoConnections.organizationId })
      .from(ssoConnections)
      .innerJoin(organizationDomains, eq(organizationDomains.organizationId, ssoConnections.organizationId))
      .where(
        and(
          eq(organizationDomains.domain, domain),
          eq(organizationDomains.status, "verified"),
          live(organizationDomains),
          eq(ssoConnections.enabled, true),
          eq(ssoConnections.requireSso, true),
          live(ssoConnections),
        ),
      )
      .orderBy(ssoConnections.createdAt)
      .limit(1);
    return row;
  },

  /** Live SAML connections whose IdP metadata is re-read from a URL (the refresh job). */
  listSamlWithMetadataUrl: (db: Executor): Promise<ConnectionRow[]> =>
    db
      .select(selection)
      .from(ssoConnections)
      .where(and(eq(ssoConnections.kind, "saml"), sql`${ssoConnections.config}->>'metadataUrl' is not null`, live(ssoConnections))),

  async insert(db: Executor, v: NewConnection): Promise<ConnectionRow> {
    const [row] = await db.insert(ssoConnections).values(v).returning(selection);
    return row!;
  },

  async update(db: Executor, orgId: string, id: string, changes: ConnectionChanges): Promise<ConnectionRow | undefined> {
    const [row] = await db.update(ssoConnections).set(changes).where(and(idInOrg(ssoConnections, orgId, id), live(ssoConnections))).returning(selection);
    return row;
  },

  async softDelete(db: Executor, orgId: string, id: string, now: Date): Promise<ConnectionRow | undefined> {
    const [row] = await db
      .update(ssoConnections)
      .set({ deletedAt: now, enabled: false, updatedAt: now })
      .where(and(idInOrg(ssoConnections, orgId, id), live(ssoConnections)))
      .returning(selection);
    return row;
  },
};
