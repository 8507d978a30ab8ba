import { errors, type Adapter, type AdapterPayload } from "oidc-provider";
import { isDependencyOutage, isTransientConflict } from "../infra/db-errors.js";

/**
 * PostgreSQL or Redis down, in the provider's terms. oidc-provider answers any error it did not
 * raise itself with 500 `server_error`; an outage is not that: it is RFC 6749's
 * `temporarily_unavailable` (§4.1.2.1), sent back to the client's redirect URI when the provider
 * has validated it, or answered with HTTP 503 and Retry-After at the token, userinfo and other
 * JSON endpoints and on the provider's pages. Exposed (its code and description reach the client),
 * with nothing of the cause: the driver's message stays in the log.
 */
export class TemporarilyUnavailable extends errors.OIDCProviderError {
  static readonly RETRY_AFTER_SECONDS = 5;
  override error_description = "The service is temporarily unavailable: try again shortly";

  constructor() {
    super(503, "temporarily_unavailable");
    this.expose = true;
  }
}

/** The provider's error for an outage (or a transaction rolled back for a concurrent change); anything else as it was. */
export const asProviderError = (e: unknown): unknown => (isDependencyOutage(e) || isTransientConflict(e) ? new TemporarilyUnavailable() : e);

/** Runs `work`, turning an outage into TemporarilyUnavailable (for the functions Keyward gives the provider). */
export async function unlessOutage<T>(work: () => Promise<T>): Promise<T> {
  try {
    return await work();
  } catch (e) {
    throw asProviderError(e);
  }
}

type AdapterClass = new (model: string) => Adapter;

/** The storage adapter with every method's outage reported as TemporarilyUnavailable. */
export function outageAwareAdapter(Base: AdapterClass): AdapterClass {
  return class OutageAwareAdapter extends Base {
    override upsert(id: string, payload: AdapterPayload, expiresIn?: number) {
      return unlessOutage(() => super.upsert(id, payload, expiresIn));
    }
    override find(id: string) {
      return unlessOutage(() => super.find(id));
    }
    override findByUserCode(userCode: string) {
      return unlessOutage(() => super.findByUserCode(userCode));
    }
    override findByUid(uid: string) {
      return unlessOutage(() => super.findByUid(uid));
    }
    override consume(id: string) {
      return unlessOutage(() => super.consume(id));
    }
    override destroy(id: string) {
      return unlessOutage(() => super.destroy(id));
    }
    override revokeByGrantId(grantId: string) {
      return unlessOutage(() => super.revokeByGrantId(grantId));
    }
  };
}
