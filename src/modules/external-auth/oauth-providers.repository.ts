import { eq } from "drizzle-orm";
import { oauthProviderConfigs } from "../../../schema/index.js";
import { pickColumns } from "../../infra/columns.js";
import type { Executor } from "../../infra/db.js";
import type { ProviderName } from "./external-auth.schemas.js";

export const publicColumns = pickColumns(oauthProviderConfigs, ["provider", "clientId", "scopes", "isEnabled", "updatedAt"]);

export type ProviderConfigRow = Pick<typeof oauthProviderConfigs.$inferSelect, keyof typeof publicColumns>;
type Values = Omit<typeof oauthProviderConfigs.$inferInsert, "provider" | "createdAt">;
/** An update keeps the stored secret unless it is given. */
type Changes = Omit<Values, "clientSecretSealed"> & { clientSecretSealed?: string };

/** Stored provider configurations. The sealed secret is written here and read by oauth-providers.secrets.repository.ts only. */
export const oauthProvidersRepository = {
  list(db: Executor): Promise<ProviderConfigRow[]> {
    return db.select(publicColumns).from(oauthProviderConfigs);
  },

  async find(db: Executor, provider: ProviderName, forUpdate = false): Promise<ProviderConfigRow | undefined> {
    const q = db.select(publicColumns).from(oauthProviderConfigs).where(eq(oauthProviderConfigs.provider, provider));
    const [row] = forUpdate ? await q.for("update") : await q;
    return row;
  },

  async insert(db: Executor, provider: ProviderName, values: Values, now: Date): Promise<ProviderConfigRow> {
    const [row] = await db.insert(oauthProviderConfigs).values({ provider, ...values, createdAt: now }).returning(publicColumns);
    return row!;
  },

  async update(db: Executor, provider: ProviderName, values: Changes): Promise<ProviderConfigRow> {
    const [row] = await db.update(oauthProviderConfigs).set(values).where(eq(oauthProviderConfigs.provider, provider)).returning(publicColumns);
    return row!;
  },

  async delete(db: Executor, provider: ProviderName): Promise<boolean> {
    const gone = await db.delete(oauthProviderConfigs).where(eq(oauthProviderConfigs.provider, provider)).returning({ provider: oauthProviderConfigs.provider });
    return gone.length > 0;
  },
};
