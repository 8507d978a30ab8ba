import { createServer, type IncomingMessage, type ServerResponse } from "node:http";
import type { AddressInfo } from "node:net";
import * as oc from "openid-client";
import { CliError, ExitCode } from "./errors.js";
import { SCOPES } from "./oidc.js";

export interface BrowserLoginOptions {
  resource: string;
  /** Shows the address (and opens a browser when allowed). */
  present(url: string): Promise<void>;
  timeoutMs?: number;
}

/** The answer's page. It names no icon of its own, so the browser asks for no /favicon.ico (a refused request, reported in its console). */
const page = (title: string, body: string) =>
  `<!doctype html><meta charset="utf-8"><link rel="icon" href="data:,"><title>${title}</title><body style="font-family:system-ui;margin:3rem"><h1>${title}</h1><p>${body}</p></body>`;

/**
 * The authorization code flow with PKCE on a loopback redirect (RFC 8252 §7.3): a listener on
 * 127.0.0.1 at a port the system picks, path /callback. Only the answer carrying our `state` is
 * taken; anything else is refused and the listener keeps waiting, so a stray or forged request
 * cannot end (or hijack) the sign-in.
 */
export async function browserLogin(config: oc.Configuration, options: BrowserLoginOptions): Promise<oc.TokenEndpointResponse> {
  const verifier = oc.randomPKCECodeVerifier();
  const state = oc.randomState();
  const nonce = oc.randomNonce();
  let settle!: { resolve: (u: URL) => void; reject: (e: Error) => void };
  const callback = new Promise<URL>((resolve, reject) => (settle = { resolve, reject }));
  let redirectUri = "";

  const server = createServer((req: IncomingMessage, res: ServerResponse) => {
    const url = new URL(req.url ?? "/", "http://127.0.0.1");
    if (url.pathname !== "/callback" || url.searchParams.get("state") !== state) {
      res.writeHead(400, { "content-type": "text/html; charset=utf-8" }).end(page("Not this sign-in", "This address only accepts the answer to the sign-in keyward started."));
      return;
    }
    const denied = url.searchParams.get("error");
    res.writeHead(200, { "content-type": "text/html; charset=utf-8", connection: "close" });
    res.end(denied ? page("Sign-in not completed", "You can close this window.") : page("Signed in", "You can close this window and return to the terminal."));
    if (denied) settle.reject(new CliError(`Sign-in not completed: ${url.searchParams.get("error_description") ?? denied}`, ExitCode.AUTH, denied.toUpperCase()));
    // The exact redirect URI plus the answer's query: openid-client derives redirect_uri from it.
    else settle.resolve(new URL(`${redirectUri}${url.search}`));
  });
  await new Promise<void>((resolve, reject) => server.once("error", reject).listen(0, "127.0.0.1", resolve));
  redirectUri = `http://127.0.0.1:${(server.address() as AddressInfo).port}/callback`;
  const timer = setTimeout(() => settle.reject(new CliError("No answer from the browser in time: run `keyward login` again", ExitCode.AUTH, "LOGIN_TIMEOUT")), options.timeoutMs ?? 5 * 60_000);

  try {
    const url = oc.buildAuthorizationUrl(config, {
      redirect_uri: redirectUri,
      scope: SCOPES,
      resource: options.resource,
      code_challenge: await oc.calculatePKCECodeChallenge(verifier),
      code_challenge_method: "S256",
      state,
      nonce,
      // No prompt=consent: Keyward issues its own CLI a refresh token once the user has consented
      // (first sign-in only), where OpenID Connect would drop offline_access without it.
    });
    await options.present(url.toString());
    const returned = await callback;
    return await oc.authorizationCodeGrant(config, returned, { pkceCodeVerifier: verifier, expectedState: state, expectedNonce: nonce }, { resource: options.resource });
  } finally {
    clearTimeout(timer);
    server.closeAllConnections();
    server.close();
  }
}
