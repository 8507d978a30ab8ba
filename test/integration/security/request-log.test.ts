import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { redactUrl } from "../../../src/lib/redact.js";
import { startTestApp, type TestApp } from "../../helpers/app.js";
import { captureLogger } from "../../helpers/log-capture.js";
import { invite, newOrg } from "../../factories/orgs.js";
import { newUser, PASSWORD, uniqueEmail } from "../../factories/users.js";

/**
 * Issue 12, item 9: an invitation token read from the request log joined an organization. The
 * request log, at the production level and with the production logger, carries no secret that
 * travels in a URL: invitation links, token/code/state/cli_token query values, a redirect URL's token.
 */
let app: TestApp;
const capture = captureLogger("info");
beforeAll(async () => {
  app = await startTestApp({ NODE_ENV: "production", LOG_LEVEL: "info", RATE_LIMIT_ENABLED: "false" }, { logger: capture.logger });
});
afterAll(() => app?.close());

describe("secrets in URLs never reach the request log", () => {
  it("masks the invitation token in every shape of its path, while the invitation's id stays readable", async () => {
    const owner = await newUser(app);
    const org = await newOrg(app, owner);
    const token = await invite(app, org.id, owner, uniqueEmail("invitee"));
    const listed = await app.http.get(`/api/v1/organizations/${org.id}/invites`, { token: owner.token });
    const inviteId: string = listed.body.data.invites[0].id;
    const before = capture.lines.length;

    expect((await app.http.get(`/api/v1/invites/${token}`)).status).toBe(200);
    await app.http.get(`/api/v1/INVITES/${token}`);
    await app.http.get(`/api/v1/invites/${token}%ZZ`); // a malformed escape: the router's error quotes the parameter
    await app.http.get(`/api/v1/invites/${token}/extra/segments?token=${token}`);
    await app.http.get(`/invites/${token}`); // not under /api/v1 at all: still a link someone could replay
    const accepted = await app.http.post(`/api/v1/invites/${token}/accept`, { full_name: "Invitee", password: PASSWORD });
    expect(accepted.status).toBe(200);
    await app.http.delete(`/api/v1/organizations/${org.id}/invites/${inviteId}`, { token: owner.token });

    const lines = capture.lines.slice(before);
    const logged = JSON.stringify(lines);
    expect(logged).not.toContain(token);
    expect(logged).not.toContain(accepted.body.data.token);
    const urls = lines.filter((l) => l.req?.url).map((l) => l.req.url as string);
    expect(urls).toContain("/api/v1/invites/[REDACTED]");
    expect(urls).toContain("/api/v1/invites/[REDACTED]/accept");
    expect(urls).toContain(`/api/v1/organizations/${org.id}/invites/${inviteId}`);
    // The malformed escape is a client error now, not an "unhandled error" line quoting the path.
    expect(lines.filter((l) => l.level >= 50)).toEqual([]);
  });

  it("masks token, code, state, cli_token and redirect values in query strings on REST, pages, OIDC and GraphQL", async () => {
    const user = await newUser(app);
    const secret = "kws_SECRETVALUE0123456789abcdefghijklmnopqrstuv";
    const before = capture.lines.length;
    const cli = await app.http.get(`/api/v1/token_please?redirect_url=${encodeURIComponent("http://127.0.0.1:8250/?token=")}`);
    const cliToken = new URL(cli.headers.get("location")!, app.url).searchParams.get("cli_token")!;
    expect(cliToken).toBeTruthy();
    await app.http.get(`/cli/authorize?cli_token=${cliToken}`, { token: user.token });
    await app.http.get(`/api/v1/cli/redirect-url?token=${cliToken}`, { token: user.token });
    await app.http.get(`/api/v1/auth/token?redirect=${encodeURIComponent(`https://app.example.com/cb?token=${secret}`)}`, { token: user.token });
    await app.http.get(`/api/v1/auth/external/github/callback?code=${secret}&state=${secret}`);
    await app.http.get(`/api/v1/oidc/auth?client_id=demo&response_type=code&state=${secret}&nonce=${secret}&code_challenge=${secret}`);
    await app.http.get(`/verify-email?token=${secret}`);
    // The other emailed-link pages, and a sign-in that will come back to an invitation.
    for (const path of [`/reset-password?token=${secret}`, `/activate?code=${secret}`, `/invite?token=${secret}`, `/login?next=${encodeURIComponent(`/invite?token=${secret}`)}`]) await app.http.get(path);
    await app.http.get(`/graphql?query=${encodeURIComponent(`{ __typename }`)}&variables=${encodeURIComponent(JSON.stringify({ t: secret }))}`);
    await app.http.get(`/api/v1/auth/audit-logs?page=2&per_page=10&${secret}`, { token: user.token });

    const lines = capture.lines.slice(before);
    const logged = JSON.stringify(lines);
    for (const s of [secret, cliToken, user.token]) expect(logged).not.toContain(s);
    expect(logged).not.toContain("SECRETVALUE");
    const urls = lines.filter((l) => l.req?.url).map((l) => l.req.url as string);
    expect(urls.length).toBeGreaterThanOrEqual(9);
    expect(urls).toContain("/api/v1/auth/external/github/callback?code=[REDACTED]&state=[REDACTED]");
    // Harmless parameters stay readable.
    expect(urls).toContain("/api/v1/auth/audit-logs?page=2&per_page=10&[REDACTED]");
    expect(urls.some((u) => u.startsWith("/api/v1/oidc/auth?client_id=demo&response_type=code&state=[REDACTED]"))).toBe(true);
  });

  it("redacts URLs the same way wherever they come from (unit)", () => {
    const id = "5b0f8a52-3c1e-4b5e-9a51-2f6f0e6b9e10";
    expect(redactUrl("/api/v1/invites/abc")).toBe("/api/v1/invites/[REDACTED]");
    expect(redactUrl("/api/v1/%69nvites/abc/accept")).toBe("/api/v1/%69nvites/[REDACTED]/accept");
    expect(redactUrl(`/api/v1/organizations/${id}/invites/${id}`)).toBe(`/api/v1/organizations/${id}/invites/${id}`);
    expect(redactUrl(`/api/v1/users/me/invites/${id}/accept`)).toBe(`/api/v1/users/me/invites/${id}/accept`);
    // Only an id is kept after an organization's /invites/: a token there is still masked.
    expect(redactUrl(`/api/v1/organizations/${id}/invites/kwi_token`)).toBe(`/api/v1/organizations/${id}/invites/[REDACTED]`);
    expect(redactUrl("/x?Token=a&PAGE=3&redirect_url=http%3A%2F%2F127.0.0.1%2F%3Ftoken%3Dabc")).toBe("/x?token=[REDACTED]&PAGE=3&redirect_url=[REDACTED]");
    expect(redactUrl("/x?%E0%A4%A=1&=2&&")).toBe("/x?[REDACTED]&[REDACTED]");
  });
});
