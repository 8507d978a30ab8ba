import Provider, { errors, type AdapterPayload, type Configuration, type KoaContextWithOIDC } from "oidc-provider";
import { camelToSnake } from "../lib/strings.js";
import { isAppError } from "../lib/errors.js";
import { newClientId, newClientSecret, type OidcRegistrationService } from "../modules/oidc-clients/index.js";
import { requestContext } from "./request-context.js";

/**
 * Dynamic Client Registration (RFC 7591) and its management (RFC 7592) through oidc-provider's
 * registration feature, never open: every registration presents an initial access token an
 * organization's admin (or a superadmin) issued, and the client belongs to that organization.
 * oidc-provider runs the protocol (discovery's registration_endpoint, the JSON answers, registration
 * access tokens, RFC 7592's read, update and delete); Keyward's registration service decides and
 * stores, with the rules an admin-created client obeys.
 */

/** What a client may say about itself; everything else it sends is left out (RFC 7591 §3.2.1 lets the server replace values). */
const REGISTRABLE = new Set([
  "client_id",
  "client_id_issued_at",
  "client_secret",
  "client_secret_expires_at",
  "client_name",
  "redirect_uris",
  "post_logout_redirect_uris",
  "grant_types",
  "response_types",
  "token_endpoint_auth_method",
  "id_token_signed_response_alg",
]);

/** The one registration policy, named by every initial access token and so by every registration access token. */
export const REGISTRATION_POLICY = "keyward";

/**
 * Shapes a registration (and an RFC 7592 update) as Keyward stores clients, before oidc-provider
 * validates it, so that the answer shows exactly what was registered and a later read shows the
 * same: unsupported metadata is dropped, and the values Keyward derives for every client are set.
 */
function shapeRegistration(_ctx: KoaContextWithOIDC, properties: Record<string, unknown>): void {
  for (const key of Object.keys(properties)) if (!REGISTRABLE.has(key)) delete properties[key];
  // RFC 7591 §2: without grant_types, the client uses the authorization code grant only.
  properties.grant_types ??= ["authorization_code"];
  const grants = Array.isArray(properties.grant_types) ? properties.grant_types : [];
  properties.response_types = grants.includes("authorization_code") ? ["code"] : [];
  properties.client_name ??= properties.client_id;
  // As for every client (OidcClientsService.providerMetadata): private-use redirect schemes are native apps.
  const uris = Array.isArray(properties.redirect_uris) ? properties.redirect_uris : [];
  properties.application_type = uris.some((u) => typeof u !== "string" || !/^https?:/i.test(u)) ? "native" : "web";
}

/** oidc-provider's registration features, on when OIDC_DYNAMIC_REGISTRATION is. */
export function registrationFeatures(enabled: boolean): Pick<NonNullable<Configuration["features"]>, "registration" | "registrationManagement"> {
  return {
    registration: {
      enabled,
      initialAccessToken: true,
      issueRegistrationAccessToken: true,
      idFactory: () => newClientId(),
      secretFactory: () => newClientSecret(),
      policies: { [REGISTRATION_POLICY]: shapeRegistration },
    },
    // A registration access token is replaced at every update (the old one stops working).
    registrationManagement: { enabled, rotateRegistrationAccessToken: true },
  };
}

/** Keyward metadata (organization, CORS origins, lifetimes, API scopes) is the admins' business, not part of a registration's answer. */
export function hideKeywardMetadata(ctx: KoaContextWithOIDC): void {
  if (!["registration", "client", "client_update"].includes(ctx.oidc.route) || !ctx.body || typeof ctx.body !== "object") return;
  const body = ctx.body as Record<string, unknown>;
  for (const key of Object.keys(body)) if (key.startsWith("urn:keyward:")) delete body[key];
}

/** A stored client's registrable metadata, in the registration service's terms. */
const fieldsOf = (m: AdapterPayload) => ({
  name: m.client_name,
  redirectUris: m.redirect_uris ?? [],
  postLogoutRedirectUris: m.post_logout_redirect_uris ?? [],
  grantTypes: m.grant_types,
  tokenEndpointAuthMethod: m.token_endpoint_auth_method,
  idTokenSignedResponseAlg: m.id_token_signed_response_alg,
});

/** The service's refusals in RFC 7591 §3.2.2's terms. */
function registrationError(err: unknown): unknown {
  if (!isAppError(err)) return err;
  if (err.code === "VALIDATION_ERROR") {
    const [first] = (err.details?.errors as Array<{ path: string; message: string }> | undefined) ?? [];
    const field = first?.path.split(".")[0] ?? "";
    // InvalidClientMetadata answers invalid_redirect_uri for a description starting with redirect_uris.
    return new errors.InvalidClientMetadata(first ? `${camelToSnake(field)}: ${first.message}` : err.message);
  }
  if (err.code === "REGISTRATION_TOKEN_INVALID") return new errors.InvalidToken(err.message);
  if (err.code === "CLIENT_NOT_FOUND") return new errors.InvalidToken("client not found");
  return err;
}

/** The current provider request (the adapter is called within one). */
function providerRequest(): KoaContextWithOIDC {
  const ctx = Provider.ctx;
  if (!ctx?.oidc) throw new Error("client registration outside a provider request");
  return ctx;
}

/** How the adapter stores registered clients and reads initial access tokens (adapter.ts). */
export interface RegistrationStore {
  saveClient(clientId: string, metadata: AdapterPayload): Promise<void>;
  destroyClient(clientId: string): Promise<void>;
  findInitialAccessToken(value: string): Promise<AdapterPayload | undefined>;
}

export function registrationStore(registration: OidcRegistrationService): RegistrationStore {
  return {
    async saveClient(clientId, metadata) {
      const ctx = providerRequest();
      const caller = requestContext(ctx);
      try {
        if (ctx.oidc.route === "registration") {
          const secret = typeof metadata.client_secret === "string" ? metadata.client_secret : null;
          await registration.registerClient(caller, ctx.oidc.getAccessToken(), { clientId, clientSecret: secret, fields: fieldsOf(metadata) });
        } else if (ctx.oidc.route === "client_update") {
          await registration.updateRegisteredClient(caller, clientId, fieldsOf(metadata));
        } else {
          throw new Error(`unexpected client write on route ${ctx.oidc.route}`);
        }
      } catch (err) {
        throw registrationError(err);
      }
    },
    async destroyClient(clientId) {
      const ctx = providerRequest();
      if (ctx.oidc.route !== "client_delete") throw new Error(`unexpected client deletion on route ${ctx.oidc.route}`);
      await registration.deleteRegisteredClient(requestContext(ctx), clientId).catch((err: unknown) => {
        throw registrationError(err);
      });
    },
    async findInitialAccessToken(value) {
      const token = await registration.usableToken(value);
      // Expiry, revocation and uses left are the query's to check (on Keyward's clock); the use is spent at the write.
      return token ? { jti: value, kind: "InitialAccessToken", policies: [REGISTRATION_POLICY] } : undefined;
    },
  };
}
