import { eq } from "drizzle-orm";
import { oauthProviderConfigs } from "../../../schema/index.js";
import type { Executor } from "../../infra/db.js";
import { publicColumns, type ProviderConfigRow } from "./oauth-providers.repository.js";
import type { ProviderName } from "./external-auth.schemas.js";

export type ProviderConfigWithSecret = ProviderConfigRow & { clientSecretSealed: string };

/**
 * Privileged (ARCHITECTURE rule 7): a provider's stored configuration with its sealed client
 * secret, the only read of `oauth_provider_configs.client_secret_sealed`. Only the providers
 * service imports it (eslint.config.js enforces it), to sign in with the provider.
 */
export async function findProviderWithSecretPrivileged(db: Executor, provider: ProviderName): Promise<ProviderConfigWithSecret | undefined> {
  const [row] = await db
    .select({ ...publicColumns, clientSecretSealed: oauthProviderConfigs.clientSecretSealed })
    .from(oauthProviderConfigs)
    .where(eq(oauthProviderConfigs.provider, provider));
  return row;
}
