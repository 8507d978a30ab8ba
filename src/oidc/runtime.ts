import type Provider from "oidc-provider";
import type { PrivateJwk } from "../lib/crypto/index.js";
import type { OidcSigningKeysService } from "../modules/oidc-clients/index.js";
import { withTokenIssuance } from "./token-issuance.js";

type Handler = ReturnType<Provider["callback"]>;

/**
 * Holds the running provider. oidc-provider takes its keys at construction, so a key rotation
 * (here, or on another instance) swaps in a provider built with the new set; requests in flight
 * finish on the old one.
 */
export class OidcRuntime {
  private state: { provider: Provider; handler: Handler; version: string } | undefined;

  constructor(
    private readonly keys: OidcSigningKeysService,
    private readonly build: (keys: PrivateJwk[]) => Provider,
  ) {}

  /** First start creates the keys; every start loads them. */
  async start(): Promise<void> {
    await this.keys.ensureCurrent();
    await this.reload();
  }

  /** Rotates keys that are due, drops expired ones, and picks up changes made by any instance. */
  async maintain(): Promise<{ created: string[]; retired: string[]; reloaded: boolean }> {
    const rotated = await this.keys.ensureCurrent();
    await this.keys.deleteExpired();
    return { ...rotated, reloaded: await this.reload() };
  }

  /** Rebuilds the provider when the published key set changed. */
  async reload(): Promise<boolean> {
    const set = await this.keys.load();
    if (set.version === this.state?.version) return false;
    const provider = this.build(set.keys);
    this.state = { provider, handler: provider.callback(), version: set.version };
    return true;
  }

  get provider(): Provider {
    if (!this.state) throw new Error("OIDC provider not started");
    return this.state.provider;
  }

  readonly handle: Handler = (req, res) => {
    if (!this.state) throw new Error("OIDC provider not started");
    return withTokenIssuance(() => this.state!.handler(req, res));
  };
}
