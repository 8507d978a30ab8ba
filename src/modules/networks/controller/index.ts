/**
 * The one adapter between Keyward and a ZeroTier controller: a self-hosted ZeroTierOne controller
 * (`X-ZT1-Auth`, external-apis.md §7) or ZeroTier Central (`Authorization: token`, §6). Nothing
 * else in Keyward speaks HTTP to a controller. Both APIs are normalized to the shapes in types.ts;
 * http.ts carries the requests (authentication, timeouts, retries), self-hosted.ts and central.ts
 * speak each dialect.
 */
import { centralClient } from "./central.js";
import { Http, type ClientOptions } from "./http.js";
import { selfHostedClient } from "./self-hosted.js";
import type { ControllerClient, ControllerConfig } from "./types.js";

export type { ClientOptions } from "./http.js";
export {
  ControllerError,
  type ControllerClient,
  type ControllerConfig,
  type ControllerErrorKind,
  type ControllerMember,
  type ControllerMode,
  type ControllerNetwork,
} from "./types.js";

export function createControllerClient(config: ControllerConfig, options: ClientOptions = {}): ControllerClient {
  const http = new Http(config, options);
  return config.mode === "central" ? centralClient(http) : selfHostedClient(http);
}
