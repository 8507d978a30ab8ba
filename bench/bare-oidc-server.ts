import { createServer } from "node:http";
import Provider from "oidc-provider";
import { generateSigningJwk } from "../src/lib/crypto/index.js";

/**
 * The baseline for the OIDC grant scenarios: oidc-provider with its in-memory adapter, one static
 * client, the same signing algorithms and refresh-token rotation, and nothing of Keyward's.
 * GET /seed?n=16 mints refresh tokens for the refresh scenario (no browser flow needed).
 */
const port = Number(process.env.PORT);
const issuer = `http://127.0.0.1:${port}`;
const provider = new Provider(issuer, {
  clients: [
    {
      client_id: "bench",
      client_secret: "bench-secret-bench-secret-bench-secret",
      grant_types: ["authorization_code", "refresh_token", "client_credentials"],
      redirect_uris: ["http://127.0.0.1/cb"],
    },
  ],
  jwks: { keys: [generateSigningJwk("RS256"), generateSigningJwk("ES256")] as never },
  features: { clientCredentials: { enabled: true }, devInteractions: { enabled: false } },
  rotateRefreshToken: true,
  findAccount: async (_ctx, sub) => ({ accountId: sub, claims: async () => ({ sub }) }),
});
const handler = provider.callback();

async function seed(n: number): Promise<string[]> {
  const client = await provider.Client.find("bench");
  const tokens: string[] = [];
  for (let i = 0; i < n; i++) {
    const grant = new provider.Grant({ accountId: `user-${i}`, clientId: "bench" });
    grant.addOIDCScope("openid offline_access");
    const grantId = await grant.save();
    const rt = new provider.RefreshToken({ accountId: `user-${i}`, client: client!, grantId, scope: "openid offline_access", gty: "authorization_code" });
    tokens.push(await rt.save());
  }
  return tokens;
}

createServer((req, res) => {
  if (req.url?.startsWith("/seed")) {
    const n = Number(new URL(req.url, issuer).searchParams.get("n") ?? 16);
    void seed(n).then((tokens) => res.setHeader("content-type", "application/json").end(JSON.stringify(tokens)));
    return;
  }
  void handler(req, res);
}).listen(port, "127.0.0.1");

// Exit on SIGTERM through process.exit, so that a `--cpu-prof` run (bench:profile bare-cc) writes its profile.
process.on("SIGTERM", () => process.exit(0));
