import type { Clock } from "../../infra/clock.js";
import type { Db } from "../../infra/db.js";
import type { AuditService } from "../audit/index.js";
import { ApiKeysService } from "./api-keys.service.js";

export { API_KEY_PREFIX, ApiKeyErrors, type ApiKeyCaller, type ApiKeysService, type ApiKeyView } from "./api-keys.service.js";
export { createApiKeySchema, revokeApiKeySchema, updateApiKeySchema } from "./api-keys.schemas.js";

/** Organization API keys: management, and `authenticate(secret)` for caller resolution. */
export function createApiKeysModule(deps: { db: Db; clock: Clock; audit: AuditService }) {
  return { apiKeys: new ApiKeysService(deps.db, deps.clock, deps.audit) };
}

export type ApiKeysModule = ReturnType<typeof createApiKeysModule>;
