import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { totpCode, totpStep } from "../../../src/lib/crypto/index.js";
import { startTestApp, type TestApp } from "../../helpers/app.js";
import { enrollTotp } from "../../factories/mfa.js";
import { newUser, PASSWORD } from "../../factories/users.js";

/**
 * Issue 12, item 14: a GraphQL sign-in put the pending second-factor token in a cookie scoped to
 * /api/v1/auth, which a browser never sends to /graphql, so the web app could not finish MFA.
 * A small cookie jar decides what a browser would send where (RFC 6265 path-match).
 */
interface Cookie {
  name: string;
  value: string;
  attrs: Record<string, string | true>;
}

function parseSetCookie(header: string): Cookie {
  const [pair, ...rest] = header.split(";").map((s) => s.trim());
  const eq = pair!.indexOf("=");
  const attrs = Object.fromEntries(rest.map((a) => {
    const i = a.indexOf("=");
    return i === -1 ? [a.toLowerCase(), true] : [a.slice(0, i).toLowerCase(), a.slice(i + 1)];
  })) as Record<string, string | true>;
  return { name: pair!.slice(0, eq), value: pair!.slice(eq + 1), attrs };
}

const pathMatches = (cookiePath: string, requestPath: string) =>
  requestPath === cookiePath || (requestPath.startsWith(cookiePath) && (cookiePath.endsWith("/") || requestPath[cookiePath.length] === "/"));

/** The live MFA cookie a response set (a deletion of an older one, with an empty value, is skipped). */
function mfaCookie(headers: Headers): Cookie {
  const cookie = headers.getSetCookie().map(parseSetCookie).find((c) => /keyward\.mfa$/.test(c.name) && c.value);
  if (!cookie) throw new Error(`no MFA cookie in ${headers.getSetCookie().join(" | ")}`);
  return cookie;
}

const LOGIN = "mutation($i: LoginInput!) { login(input: $i) { mfaRequired } }";
const COMPLETE = "mutation($c: String!) { completeMfaWithCode(code: $c) { mfaRequired user { email } } }";

describe("the pending second factor reaches both doors", () => {
  let app: TestApp;
  beforeAll(async () => {
    app = await startTestApp({ RATE_LIMIT_MFA: "1000/900" });
  });
  afterAll(() => app?.close());

  it("finishes a GraphQL sign-in over GraphQL with the HttpOnly cookie alone", async () => {
    const user = await newUser(app);
    const { secret } = await enrollTotp(app, user);
    const login = await app.http.gql(LOGIN, { i: { email: user.email, password: PASSWORD } });
    expect(login.data.login.mfaRequired).toBe(true);
    const cookie = mfaCookie(login.headers);
    expect(cookie.attrs).toMatchObject({ httponly: true, samesite: "Strict", path: "/" });
    expect(cookie.attrs.domain).toBeUndefined();
    // A browser sends it to both places a second factor is accepted.
    for (const path of ["/graphql", "/api/v1/auth/totp/verify", "/api/v1/auth/webauthn/mfa/begin"]) expect(pathMatches(cookie.attrs.path as string, path)).toBe(true);

    const done = await app.http.gql(COMPLETE, { c: totpCode(secret, totpStep(app.clock.now())) }, { cookie: `${cookie.name}=${cookie.value}` });
    expect(done.errors).toBeUndefined();
    expect(done.data.completeMfaWithCode).toEqual({ mfaRequired: false, user: { email: user.email } });
    const set = done.headers.getSetCookie();
    expect(set.some((c) => c.startsWith("keyward.sid="))).toBe(true);
    // The spent MFA cookie is cleared where it was set.
    expect(set.some((c) => c.startsWith(`${cookie.name}=;`) && /Path=\/(;|$)/.test(c))).toBe(true);
  });

  it("finishes a REST sign-in over REST with the cookie, as the hosted sign-in page does", async () => {
    const user = await newUser(app);
    const { secret } = await enrollTotp(app, user);
    const login = await app.http.post("/api/v1/auth/login", { email: user.email, password: PASSWORD });
    const cookie = mfaCookie(login.headers);
    const done = await app.http.post("/api/v1/auth/totp/verify", { code: totpCode(secret, totpStep(app.clock.now())) }, { cookie: `${cookie.name}=${cookie.value}` });
    expect(done.status, done.text).toBe(200);
    expect(done.body.data.token).toMatch(/^kws_/);
  });

  it("treats a malformed cookie value as no cookie (400, not 500)", async () => {
    const rest = await app.http.post("/api/v1/auth/totp/verify", { code: "123456" }, { cookie: "keyward.mfa=%E0%A4%A" });
    expect(rest.status).toBe(400);
    expect(rest.body.error.type).toBe("VALIDATION_ERROR");
    const gql = await app.http.gql(COMPLETE, { c: "123456" }, { cookie: "keyward.mfa=%E0%A4%A" });
    expect(gql.errors[0].extensions).toMatchObject({ status: 400 });
  });
});

describe("over HTTPS", () => {
  let app: TestApp;
  beforeAll(async () => {
    app = await startTestApp({ PUBLIC_URL: "https://localhost", RATE_LIMIT_MFA: "1000/900" });
  });
  afterAll(() => app?.close());

  it("uses a __Host- cookie (Secure, Path=/, no Domain) that still finishes MFA over GraphQL", async () => {
    const user = await newUser(app);
    const { secret } = await enrollTotp(app, user);
    const login = await app.http.gql(LOGIN, { i: { email: user.email, password: PASSWORD } });
    const cookie = mfaCookie(login.headers);
    expect(cookie.name).toBe("__Host-keyward.mfa");
    expect(cookie.attrs).toMatchObject({ secure: true, httponly: true, samesite: "Strict", path: "/" });
    expect(cookie.attrs.domain).toBeUndefined();
    // A cookie without the prefix (which a sibling subdomain could plant) is not read.
    const planted = await app.http.gql(COMPLETE, { c: "123456" }, { cookie: `keyward.mfa=${cookie.value}` });
    expect(planted.errors[0].extensions.code).toBe("VALIDATION_ERROR");
    const done = await app.http.gql(COMPLETE, { c: totpCode(secret, totpStep(app.clock.now())) }, { cookie: `${cookie.name}=${cookie.value}` });
    expect(done.errors).toBeUndefined();
    expect(done.data.completeMfaWithCode.mfaRequired).toBe(false);
  });
});
