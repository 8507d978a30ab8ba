import { generateKeyPairSync, randomBytes, randomUUID } from "node:crypto";
import { createServer, type IncomingMessage, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import Provider from "oidc-provider";

/**
 * A REAL OpenID Connect provider that sends back-channel logout (OpenID Connect Back-Channel Logout
 * 1.0): npm oidc-provider (certified; the library ../shared/tools/oidc-idp runs, which has that
 * feature off and its key out of reach), in this process, on loopback. Its signing key is the
 * test's, so a test can also sign logout tokens the provider would never send (the refusal cases).
 * Logging in: the interaction page is a username/password form, as Browser.loginAtIdp expects.
 */
export interface BackchannelOp {
  issuer: string;
  clientId: string;
  clientSecret: string;
  /** The provider's signing key (JWK with kid), for tokens the test builds itself. */
  privateJwk: Record<string, unknown> & { kid: string };
  users: { email: string; password: string; name: string; sub: string }[];
  /** Registers the relying party (Keyward's connection), with its redirect and back-channel logout URIs. */
  register(o: { redirectUri: string; backchannelLogoutUri: string }): Promise<void>;
  /** Back-channel logout calls the provider made, with the status Keyward answered. */
  sent: { uri: string; status?: number; error?: string }[];
  close(): Promise<void>;
}

export async function startBackchannelOp(users: { email: string; password: string; name: string }[]): Promise<BackchannelOp> {
  const people = users.map((u) => ({ ...u, sub: randomUUID() }));
  const clientId = "keyward-backchannel";
  const clientSecret = randomBytes(24).toString("base64url");
  const { privateKey } = generateKeyPairSync("rsa", { modulusLength: 2048 });
  const privateJwk = { ...privateKey.export({ format: "jwk" }), kid: randomBytes(8).toString("hex"), alg: "RS256", use: "sig" } as Record<string, unknown> & { kid: string };
  let handler: ((req: IncomingMessage, res: import("node:http").ServerResponse) => void) | null = null;
  const server: Server = createServer((req, res) => handler!(req, res));
  await new Promise<void>((r) => server.listen(0, "127.0.0.1", r));
  const issuer = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  const initialAccessToken = randomBytes(24).toString("base64url");
  const sent: BackchannelOp["sent"] = [];
  const provider = new Provider(issuer, {
    jwks: { keys: [privateJwk as never] },
    cookies: { keys: [randomBytes(32).toString("hex")] },
    scopes: ["openid", "profile", "email"],
    claims: { openid: ["sub"], email: ["email", "email_verified"], profile: ["name"] },
    conformIdTokenClaims: false,
    features: {
      devInteractions: { enabled: false },
      rpInitiatedLogout: { enabled: true },
      backchannelLogout: { enabled: true },
      registration: { enabled: true, initialAccessToken, idFactory: () => clientId, secretFactory: () => clientSecret },
    },
    pkce: { required: () => false },
    // Its SSRF guard refuses loopback addresses, and Keyward runs on loopback here.
    fetch: (url, options) => {
      const { dispatcher: _ssrfGuard, ...rest } = (options ?? {}) as RequestInit & { dispatcher?: unknown };
      return globalThis.fetch(url, rest);
    },
    async findAccount(_ctx, sub) {
      const u = people.find((p) => p.sub === sub);
      if (!u) return undefined;
      return { accountId: sub, claims: async () => ({ sub, email: u.email, email_verified: true, name: u.name }) };
    },
    async loadExistingGrant(ctx) {
      const grantId = ctx.oidc.result?.consent?.grantId || ctx.oidc.session!.grantIdFor(ctx.oidc.client!.clientId);
      if (grantId) {
        const g = await ctx.oidc.provider.Grant.find(grantId);
        if (g) return g;
      }
      const grant = new ctx.oidc.provider.Grant({ clientId: ctx.oidc.client!.clientId, accountId: ctx.oidc.session!.accountId });
      grant.addOIDCScope("openid profile email");
      grant.addOIDCClaims(["email", "email_verified", "name"]);
      await grant.save();
      return grant;
    },
    interactions: { url: (_ctx, interaction) => `/interaction/${interaction.uid}` },
  });
  provider.on("backchannel.success", (_client: unknown, _accountId: unknown, _sid: unknown) => sent.push({ uri: "ok", status: 200 }));
  provider.on("backchannel.error", (_ctx: unknown, err: Error) => sent.push({ uri: "error", error: `${err.message}${err.cause ? `: ${String((err.cause as Error).message ?? err.cause)}` : ""}` }));
  const callback = provider.callback();
  handler = (req, res) => {
    const m = /^\/interaction\/([^/?]+)(\/login)?/.exec(req.url ?? "");
    if (!m) return void callback(req, res);
    if (!m[2]) {
      res.setHeader("content-type", "text/html");
      res.end(`<form method="post" action="/interaction/${m[1]}/login"><input name="username"><input name="password" type="password"></form>`);
      return;
    }
    let body = "";
    req.on("data", (c) => (body += c));
    req.on("end", () => {
      const f = new URLSearchParams(body);
      const u = people.find((p) => p.email === f.get("username") && p.password === f.get("password"));
      if (!u) return void res.writeHead(403).end("Incorrect username or password.");
      void provider.interactionFinished(req, res, { login: { accountId: u.sub } }, { mergeWithLastSubmission: false });
    });
  };
  return {
    issuer,
    clientId,
    clientSecret,
    privateJwk,
    users: people,
    sent,
    async register(o) {
      const res = await fetch(`${issuer}/reg`, {
        method: "POST",
        headers: { "content-type": "application/json", authorization: `Bearer ${initialAccessToken}` },
        body: JSON.stringify({
          redirect_uris: [o.redirectUri],
          post_logout_redirect_uris: [`${issuer}/bye`],
          backchannel_logout_uri: o.backchannelLogoutUri,
          backchannel_logout_session_required: true,
          token_endpoint_auth_method: "client_secret_basic",
          grant_types: ["authorization_code"],
          response_types: ["code"],
        }),
      });
      if (res.status !== 201) throw new Error(`registration failed: ${res.status} ${await res.text()}`);
    },
    close: () => new Promise<void>((r) => server.close(() => r())),
  };
}
