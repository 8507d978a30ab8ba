import Provider, { errors, interactionPolicy, type Account, type Configuration, type KoaContextWithOIDC } from "oidc-provider";
import type { Config } from "../config/index.js";
import type { Clock } from "../infra/clock.js";
import type { Db } from "../infra/db.js";
import type { PrivateJwk, SecretBox } from "../lib/crypto/index.js";
import { CLIENT_EXTRA, type OidcClientsService, type OidcIdentityService, type OidcRegistrationService } from "../modules/oidc-clients/index.js";
import { apiResource, isApiScope } from "../lib/api-scopes.js";
import { createAdapterFactory } from "./adapter.js";
import { outageAwareAdapter, unlessOutage } from "./outage.js";
import { takeAccountReadAhead } from "./token-issuance.js";
import type { KeywardUserReader } from "./keyward-session.js";
import { renderLogout } from "./logout.js";
import { providerCookies, secureProviderCookies } from "./cookies.js";
import { registrationFeatures, registrationStore } from "./registration.js";
import { deviceConfirmPage, deviceInputPage, errorPage, messagePage } from "./views.js";
import { OIDC_PREFIX, ROUTES } from "../http/oidc-paths.js";

export { OIDC_PREFIX, ROUTES };
export const SCOPES = ["openid", "offline_access", "email", "profile", "organizations"];

export interface ProviderDeps {
  config: Config;
  db: Db;
  clock: Clock;
  box: SecretBox;
  clients: OidcClientsService;
  identity: OidcIdentityService;
  /** Dynamic Client Registration: initial access tokens and the clients registered with them. */
  registration: OidcRegistrationService;
  /** Resolves the Keyward user behind a request's session cookie (null when signed out). */
  keywardUser: KeywardUserReader;
}

/** What a superadmin allowed the client to ask of Keyward's own API (empty: nothing). */
const apiScopesOf = (client: object | undefined) => ((client as Record<string, unknown> | undefined)?.["urn:keyward:api_scopes"] as string[] | undefined) ?? [];

/** Keyward's own clients (the CLI): first-party, no organization. */
export const isBuiltIn = (client: object | undefined) => (client as Record<string, unknown> | undefined)?.["urn:keyward:built_in"] === true;

type ClientTtl = { AccessToken: number; IdToken: number; RefreshToken: number };
const ttlOf = (client: { [key: string]: unknown } | undefined) => client?.["urn:keyward:ttl"] as ClientTtl | undefined;
/** The organization that registered the client. */
const organizationOf = (client: object | undefined) => (client as Record<string, unknown> | undefined)?.["urn:keyward:organization_id"] as string | undefined;

const DAY = 86_400;

/**
 * The login prompt also asks for sign-in when the Keyward session behind the browser is gone or
 * belongs to someone else: signing out of Keyward ends single sign-on for every client too.
 */
function loginPolicy(keywardUser: KeywardUserReader) {
  const { base, Check } = interactionPolicy;
  const policy = base();
  policy.get("login")!.checks.add(
    new Check("keyward_session", "End-User authentication is required", async (ctx) => {
      if (ctx.oidc.result?.login) return Check.NO_NEED_TO_PROMPT;
      const user = await unlessOutage(() => keywardUser(ctx.req));
      return user && user.userId === ctx.oidc.session?.accountId ? Check.NO_NEED_TO_PROMPT : Check.REQUEST_PROMPT;
    }),
  );
  return policy;
}

/** oidc-provider configured for Keyward. `keys` come from the signing-key store, active keys first. */
export function buildProvider(deps: ProviderDeps, keys: PrivateJwk[]): Provider {
  const { config, identity } = deps;
  const brand = config.email.brand.name;
  const oidc = config.oidc;
  const api = apiResource(config.http.publicUrl);
  // POST at the authorization and end-session endpoints, with the cookies that takes (cookies.ts).
  const { cookies, postMethods } = providerCookies(config.http.publicUrl, config.session.secrets, { session: "kw_oidc_session", interaction: "kw_oidc_interaction", resume: "kw_oidc_resume" });

  const configuration: Configuration = {
    // PostgreSQL or Redis down: RFC 6749's temporarily_unavailable, never server_error (outage.ts).
    adapter: outageAwareAdapter(createAdapterFactory(deps.db, deps.clock, deps.clients, identity, deps.box, { refreshRetryGraceMs: oidc.refreshRetryGrace * 1000, registration: registrationStore(deps.registration) })),
    jwks: { keys: keys as Configuration["jwks"] extends { keys: infer K } ? K : never },
    routes: ROUTES,
    scopes: SCOPES,
    claims: {
      // `amr` says how the user signed in (pwd, otp, hwk, mfa), from the Keyward session.
      openid: ["sub", "amr"],
      email: ["email", "email_verified"],
      profile: ["name", "updated_at"],
      organizations: ["organizations"],
    },
    // ID tokens carry the claims of the granted scopes (as Keycloak's do), not only `sub`.
    conformIdTokenClaims: false,
    responseTypes: ["code"],
    // OpenID Connect Core §3.1.2.1: redirect_uri is required, even for a client with one registered.
    allowOmittingSingleRegisteredRedirectUri: false,
    clientAuthMethods: ["client_secret_basic", "client_secret_post", "none"],
    enabledJWA: { idTokenSigningAlgValues: ["RS256", "ES256"] },
    pkce: {
      // PKCE (S256; oidc-provider 9 knows no other method) for public clients always, and for
      // confidential ones too unless OIDC_REQUIRE_PKCE=false.
      required: (_ctx, client) => oidc.requirePkce || client.clientAuthMethod === "none",
    },
    extraClientMetadata: { properties: [...CLIENT_EXTRA] },
    clientBasedCORS: (_ctx, origin, client) => ((client as unknown as Record<string, unknown>)["urn:keyward:cors_origins"] as string[] | undefined)?.includes(origin) ?? false,
    async findAccount(ctx, sub): Promise<Account | undefined> {
      // The refresh grant's token read already looked the account up (adapter.ts); otherwise, now.
      const account = (takeAccountReadAhead(sub) ?? { account: await unlessOutage(() => identity.findActiveAccount(sub)) }).account;
      if (!account) return undefined;
      return {
        accountId: account.userId,
        async claims(_use, scope) {
          const scopes = new Set(scope.split(" "));
          // Only the membership in the client's own organization (README, OpenID Connect).
          const clientOrg = organizationOf(ctx.oidc.client);
          return {
            sub: account.userId,
            email: account.email,
            email_verified: account.emailVerified,
            name: account.name ?? undefined,
            updated_at: Math.floor(account.updatedAt.getTime() / 1000),
            ...(scopes.has("organizations") ? { organizations: await unlessOutage(() => identity.organizationsFor(account.userId, clientOrg)) } : {}),
          };
        },
      };
    },
    async loadExistingGrant(ctx) {
      const { client, session } = ctx.oidc;
      const grantId = ctx.oidc.result?.consent?.grantId || session!.grantIdFor(client!.clientId);
      if (grantId) return ctx.oidc.provider.Grant.find(grantId);
      // A consent remembered from an earlier visit (another browser, an ended session) still counts.
      const accountId = session!.accountId!;
      const remembered = await unlessOutage(() => identity.rememberedScopes(accountId, client!.clientId));
      if (remembered.size === 0) return undefined;
      const grant = new ctx.oidc.provider.Grant({ accountId, clientId: client!.clientId });
      grant.addOIDCScope([...remembered].filter((s) => SCOPES.includes(s)).join(" "));
      // API scopes count only while the client is still allowed them.
      const apiScopes = [...remembered].filter((s) => isApiScope(s) && apiScopesOf(client).includes(s));
      if (apiScopes.length > 0) grant.addResourceScope(api, apiScopes.join(" "));
      await grant.save();
      return grant;
    },
    interactions: {
      policy: loginPolicy(deps.keywardUser),
      url: (_ctx, interaction) => `${OIDC_PREFIX}/interaction/${interaction.uid}`,
    },
    // Every refresh rotates; a retry of one whose answer was lost is allowed briefly (adapter.ts).
    rotateRefreshToken: true,
    // OpenID Connect grants offline_access only with prompt=consent (Core §11), which would show the
    // consent page at every sign-in. Keyward's own CLI gets its refresh token (not bound to the
    // browser's session) once the user has consented, as a first-party client.
    issueRefreshToken: async (_ctx, client, code) => client.grantTypeAllowed("refresh_token") && (code.scopes.has("offline_access") || isBuiltIn(client)),
    expiresWithSession: async (ctx, code) => !code.scopes.has("offline_access") && !isBuiltIn(ctx.oidc.client),
    ttl: {
      AccessToken: (_ctx, token, client) => token.resourceServer?.accessTokenTTL ?? ttlOf(client)?.AccessToken ?? 3600,
      ClientCredentials: (_ctx, token, client) => token.resourceServer?.accessTokenTTL ?? ttlOf(client)?.AccessToken ?? 3600,
      IdToken: (_ctx, _token, client) => ttlOf(client)?.IdToken ?? 3600,
      RefreshToken: (_ctx, _token, client) => ttlOf(client)?.RefreshToken ?? 30 * DAY,
      AuthorizationCode: oidc.codeTtl,
      DeviceCode: oidc.deviceCodeTtl,
      Interaction: 3600,
      Session: oidc.sessionTtl,
      // Grants outlive the refresh tokens that rotate under them.
      Grant: 365 * DAY,
    },
    cookies,
    enableHttpPostMethods: postMethods,
    features: {
      devInteractions: { enabled: false },
      clientCredentials: { enabled: true },
      introspection: {
        enabled: true,
        // Only confidential clients may introspect, and only their own tokens.
        allowedPolicy: async (_ctx, client, token) => client.clientAuthMethod !== "none" && token.clientId === client.clientId,
      },
      revocation: { enabled: true },
      userinfo: { enabled: true },
      deviceFlow: {
        enabled: true,
        charset: "base-20",
        mask: "****-****",
        async userCodeInputSource(ctx, form, _out, err) {
          const message = err ? (err.name === "NoCodeError" || (err as { userCode?: string }).userCode ? "That code is not valid. Try again." : "The request could not be completed.") : null;
          html(ctx, deviceInputPage(brand, form, message));
        },
        async userCodeConfirmSource(ctx, form, client, _deviceInfo, userCode) {
          html(ctx, deviceConfirmPage(brand, form, client.clientName ?? client.clientId, userCode));
        },
        async successSource(ctx) {
          html(ctx, messagePage(brand, "Device connected", `${ctx.oidc.client?.clientName ?? "The device"} is now signed in. You can close this page.`));
        },
      },
      // Delegated access to Keyward's own API (lib/api-scopes): the one resource server there is.
      resourceIndicators: {
        enabled: true,
        // A refresh keeps the resource the grant was given for, so the CLI need not repeat it.
        useGrantedResource: () => true,
        async getResourceServerInfo(ctx, indicator, client) {
          if (indicator !== api) throw new errors.InvalidTarget("unknown resource: the Keyward API is " + api);
          // A client-only token would act for nobody: delegation needs a user.
          if (ctx.oidc.params?.grant_type === "client_credentials") throw new errors.InvalidTarget("the Keyward API takes tokens that act for a user");
          const allowed = apiScopesOf(client).filter(isApiScope);
          if (allowed.length === 0) throw new errors.InvalidTarget("this client is not allowed to call the Keyward API");
          return { scope: allowed.join(" "), audience: api, accessTokenFormat: "opaque", accessTokenTTL: ttlOf(client)?.AccessToken ?? 900 };
        },
      },
      // RFC 7591/7592, behind initial access tokens only (registration.ts); off unless OIDC_DYNAMIC_REGISTRATION.
      ...registrationFeatures(oidc.dynamicRegistration),
      rpInitiatedLogout: {
        enabled: true,
        // A confirmation page, unless a valid id_token_hint for this sign-in already confirms (logout.ts).
        async logoutSource(ctx, form) {
          await renderLogout(ctx, form, { brand, keywardUser: deps.keywardUser });
        },
        async postLogoutSuccessSource(ctx) {
          html(ctx, messagePage(brand, "Signed out", "You are signed out."));
        },
      },
    },
    async renderError(ctx, out) {
      html(ctx, errorPage(brand, out));
    },
  };

  const provider = new Provider(oidc.issuer, configuration);
  provider.proxy = config.http.trustProxy !== false;
  secureProviderCookies(provider, postMethods);
  return provider;
}

function html(ctx: KoaContextWithOIDC, body: string): void {
  ctx.type = "html";
  ctx.body = body;
}
