import { sql } from "drizzle-orm";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { resultRows } from "../../src/infra/db.js";
import { createChallengeLookup } from "../../src/modules/domains/dns-txt.js";
import { startTestApp, type TestApp } from "../helpers/app.js";
import { startDns, type RealDns } from "../helpers/dns.js";
import { login, newSuperadmin, newUser } from "../factories/users.js";
import { newOrg, orgWithRoles } from "../factories/orgs.js";

/**
 * Verified domains (issue 35) against a REAL DNS server (dnsmasq on loopback, its records changed
 * while it runs): claims, the TXT challenge, one organization per domain, tenancy, consumer and
 * malformed names, parallel verifications, and the periodic re-check that lapses a domain.
 */
let app: TestApp;
let dns: RealDns;
const DAY = 24 * 3600;
let seq = 0;
const fresh = (stem = "acme") => `${stem}-${Date.now().toString(36)}${(seq++).toString(36)}.test`;

beforeAll(async () => {
  dns = await startDns();
  app = await startTestApp({ DNS_RESOLVER: dns.server, DNS_TIMEOUT_MS: "2000", RATE_LIMIT_DOMAIN_VERIFY: "25/3600", DOMAIN_LAPSE_AFTER: "3" });
});
afterAll(async () => {
  await app?.close();
  dns?.stop();
});

const path = (orgId: string, rest = "") => `/api/v1/organizations/${orgId}/domains${rest}`;

async function orgAudit(orgId: string) {
  const rows = resultRows<{ action: string; success: boolean; metadata: Record<string, unknown> }>(
    await app.container.db.execute(sql`select action, success, metadata from audit_logs where organization_id = ${orgId} and action like 'org.domain.%' order by created_at, id`),
  );
  return rows;
}

/** Publishes the challenge a claim answered with (several values for one name when given). */
const publish = (...claims: Array<{ record_name: string; record_value: string }>) => dns.setTxt({ [claims[0]!.record_name]: claims.map((c) => c.record_value) });

describe("verifying a domain by its DNS TXT record", () => {
  it("claims pending, stays pending with the reason while the record is missing, verifies once it is published", async () => {
    const { org, admin } = await orgWithRoles(app);
    const domain = fresh();
    const added = await app.http.post(path(org.id), { domain: `  ${domain.toUpperCase()}. ` }, { token: admin.token });
    expect(added.status).toBe(201);
    const claim = added.body.data.domain;
    expect(claim).toMatchObject({ organization_id: org.id, domain, status: "pending", record_name: `_keyward-verification.${domain}`, verified_at: null });
    expect(claim.record_value).toMatch(/^keyward-verification=[A-Za-z0-9_-]{32}$/);

    const missing = await app.http.post(path(org.id, `/${claim.id}/verify`), {}, { token: admin.token });
    expect(missing.status).toBe(200);
    expect(missing.body.data.domain).toMatchObject({ status: "pending", verified_at: null });
    expect(missing.body.data.domain.last_check_error).toContain(`No TXT record at _keyward-verification.${domain}`);

    // A record that says something else proves nothing.
    await dns.setTxt({ [claim.record_name]: ["keyward-verification=someone-elses-token", "v=spf1 -all"] });
    const wrong = await app.http.post(path(org.id, `/${claim.id}/verify`), {}, { token: admin.token });
    expect(wrong.body.data.domain.status).toBe("pending");
    expect(wrong.body.data.domain.last_check_error).toContain("do not include");

    await dns.setTxt({ [claim.record_name]: ["v=spf1 -all", claim.record_value] });
    const verified = await app.http.post(path(org.id, `/${claim.id}/verify`), {}, { token: admin.token });
    expect(verified.status).toBe(200);
    expect(verified.body.data.domain).toMatchObject({ status: "verified", last_check_error: null });
    expect(new Date(verified.body.data.domain.next_check_at).getTime()).toBeGreaterThan(Date.now() + (DAY - 60) * 1000);

    expect(await app.services.domains.findVerifiedOrganizationForEmail(`Alice@${domain.toUpperCase()}`)).toBe(org.id);
    expect(await app.services.domains.findVerifiedOrganizationForEmail(`alice@sub.${domain}`)).toBeNull();
    expect(await app.services.domains.findVerifiedOrganizationForEmail("alice@gmail.com")).toBeNull();

    const listed = await app.http.get(path(org.id), { token: admin.token });
    expect(listed.body.data).toMatchObject({ count: 1, domains: [{ id: claim.id, status: "verified" }] });
    const gql = await app.http.gql("query($orgId: ID!) { organizationDomains(orgId: $orgId) { id domain status recordName recordValue } }", { orgId: org.id }, { token: admin.token });
    expect(gql.data.organizationDomains).toEqual([{ id: claim.id, domain, status: "verified", recordName: claim.record_name, recordValue: claim.record_value }]);

    expect((await orgAudit(org.id)).map((r) => [r.action, r.success])).toEqual([
      ["org.domain.added", true],
      ["org.domain.verify_failed", false],
      ["org.domain.verify_failed", false],
      ["org.domain.verified", true],
    ]);
  });

  it("gives a domain to one organization at most: another may claim it pending but not verify it (409)", async () => {
    const a = await orgWithRoles(app);
    const b = await orgWithRoles(app);
    const domain = fresh();
    const claimA = (await app.http.post(path(a.org.id), { domain }, { token: a.owner.token })).body.data.domain;
    const addedB = await app.http.post(path(b.org.id), { domain }, { token: b.admin.token });
    expect(addedB.status).toBe(201);
    const claimB = addedB.body.data.domain;
    // A fresh token per claim: never the one another claim published.
    expect(claimB.record_value).not.toBe(claimA.record_value);
    expect((await app.http.post(path(b.org.id), { domain }, { token: b.admin.token })).body.error.type).toBe("DOMAIN_EXISTS");

    await publish(claimA, claimB);
    expect((await app.http.post(path(a.org.id, `/${claimA.id}/verify`), {}, { token: a.admin.token })).body.data.domain.status).toBe("verified");
    const refused = await app.http.post(path(b.org.id, `/${claimB.id}/verify`), {}, { token: b.admin.token });
    expect([refused.status, refused.body.error.type]).toEqual([409, "DOMAIN_ALREADY_VERIFIED"]);
    const gql = await app.http.gql("mutation($orgId: ID!, $id: ID!) { verifyOrganizationDomain(orgId: $orgId, domainId: $id) { status } }", { orgId: b.org.id, id: claimB.id }, { token: b.admin.token });
    expect(gql.errors[0].extensions.code).toBe("DOMAIN_ALREADY_VERIFIED");
    expect((await app.http.get(path(b.org.id), { token: b.admin.token })).body.data.domains[0].status).toBe("pending");
    expect(await app.services.domains.findVerifiedOrganizationForEmail(`bob@${domain}`)).toBe(a.org.id);

    // Once A lets go, B proves it and the domain is B's.
    expect((await app.http.delete(path(a.org.id, `/${claimA.id}`), { token: a.admin.token })).status).toBe(200);
    expect(await app.services.domains.findVerifiedOrganizationForEmail(`bob@${domain}`)).toBeNull();
    expect((await app.http.post(path(b.org.id, `/${claimB.id}/verify`), {}, { token: b.admin.token })).body.data.domain.status).toBe("verified");
    expect(await app.services.domains.findVerifiedOrganizationForEmail(`bob@${domain}`)).toBe(b.org.id);
    expect((await app.http.get(path(a.org.id), { token: a.admin.token })).body.data.count).toBe(0);
    expect((await orgAudit(a.org.id)).map((r) => r.action)).toContain("org.domain.removed");
  });

  it("lets a deleted organization's verified domain go: another organization can then prove it", async () => {
    const a = await orgWithRoles(app);
    const b = await orgWithRoles(app);
    const domain = fresh();
    const claimA = (await app.http.post(path(a.org.id), { domain }, { token: a.admin.token })).body.data.domain;
    const claimB = (await app.http.post(path(b.org.id), { domain }, { token: b.admin.token })).body.data.domain;
    await publish(claimA, claimB);
    expect((await app.http.post(path(a.org.id, `/${claimA.id}/verify`), {}, { token: a.admin.token })).body.data.domain.status).toBe("verified");
    expect((await app.http.request("DELETE", `/api/v1/organizations/${a.org.id}`, { token: a.owner.token, body: { confirm: true } })).status).toBe(200);
    // Routing stops with the organization at once.
    expect(await app.services.domains.findVerifiedOrganizationForEmail(`dan@${domain}`)).toBeNull();
    expect((await app.http.post(path(b.org.id, `/${claimB.id}/verify`), {}, { token: b.admin.token })).body.data.domain.status).toBe("verified");
    expect(await app.services.domains.findVerifiedOrganizationForEmail(`dan@${domain}`)).toBe(b.org.id);
    expect((await orgAudit(a.org.id)).map((r) => [r.action, r.metadata.reason ?? null])).toEqual([
      ["org.domain.added", null],
      ["org.domain.verified", null],
      ["org.domain.removed", "organization deleted"],
    ]);
  });

  it("never lets anyone claim consumer mail domains, public suffixes, single labels or IP addresses (DOMAIN_NOT_CLAIMABLE)", async () => {
    const { org, admin } = await orgWithRoles(app);
    const refused: Record<string, string> = {
      "gmail.com": "consumer", "GoogleMail.com": "consumer", "mail.gmail.com": "consumer", "outlook.com": "consumer", "hotmail.com": "consumer", "yahoo.co.jp": "consumer",
      "icloud.com": "consumer", "proton.me": "consumer", "gmx.de": "consumer", "gmx.net": "consumer", "yandex.ru": "consumer", "mail.ru": "consumer", "qq.com": "consumer", "163.com": "consumer",
      "com": "public_suffix", "co.uk": "public_suffix", "github.io": "public_suffix", "localhost": "public_suffix", "test": "public_suffix",
      "127.0.0.1": "ip_address", "[::1]": "ip_address", "::1": "ip_address", "10.1.2.3": "ip_address",
    };
    const got: Record<string, string> = {};
    for (const domain of Object.keys(refused)) {
      const res = await app.http.post(path(org.id), { domain }, { token: admin.token });
      got[domain] = res.status === 400 && res.body.error.type === "DOMAIN_NOT_CLAIMABLE" ? res.body.error.details.reason : `${res.status} ${res.body.error?.type}`;
    }
    expect(got).toEqual(refused);
    const gql = await app.http.gql("mutation($orgId: ID!) { addOrganizationDomain(orgId: $orgId, domain: \"gmail.com\") { id } }", { orgId: org.id }, { token: admin.token });
    expect(gql.errors[0].extensions.code).toBe("DOMAIN_NOT_CLAIMABLE");
    expect((await app.http.get(path(org.id), { token: admin.token })).body.data.count).toBe(0);
  });

  it("refuses malformed names with 400, and stores internationalised ones in their xn-- form", async () => {
    const { org, admin } = await orgWithRoles(app);
    const malformed: unknown[] = [
      "", "   ", "exa mple.com", "https://example.com", "example.com/path", "bob@example.com", "-bad.example", "bad-.example", "a..example", `${"a".repeat(64)}.example`,
      `${"abcdefghij.".repeat(25)}example`, "x".repeat(5000), "💩.example", "exa\u200bmple.example", "exam\u202eple.example", "ex\u0000ample.com", "exa_mple.com", 42, null, ["example.com"],
    ];
    const failures: string[] = [];
    for (const domain of malformed) {
      const res = await app.http.post(path(org.id), { domain }, { token: admin.token });
      if (res.status !== 400 || res.body.error.type !== "VALIDATION_ERROR") failures.push(`${JSON.stringify(domain).slice(0, 40)} → ${res.status} ${res.body.error?.type}`);
    }
    expect(failures).toEqual([]);
    expect((await app.http.get(path(org.id), { token: admin.token })).body.data.count).toBe(0);

    const stem = fresh("bücher");
    const idn = await app.http.post(path(org.id), { domain: stem.toUpperCase() }, { token: admin.token });
    expect(idn.status).toBe(201);
    expect(idn.body.data.domain.domain).toBe(new URL(`http://${stem}`).hostname);
    expect(idn.body.data.domain.domain).toMatch(/^xn--/);
    // The same name written either way is one claim.
    expect((await app.http.post(path(org.id), { domain: idn.body.data.domain.domain }, { token: admin.token })).body.error.type).toBe("DOMAIN_EXISTS");
  });
});

describe("who manages an organization's domains", () => {
  it("its owners and admins, and superadmins; members are refused, other organizations find nothing", async () => {
    const { org, owner, admin, member, guest } = await orgWithRoles(app);
    const other = await orgWithRoles(app);
    const claim = (await app.http.post(path(org.id), { domain: fresh() }, { token: owner.token })).body.data.domain;
    const routes = [
      ["GET", path(org.id)],
      ["POST", path(org.id)],
      ["POST", path(org.id, `/${claim.id}/verify`)],
      ["DELETE", path(org.id, `/${claim.id}`)],
    ] as const;
    for (const [method, url] of routes) {
      const body = method === "POST" ? { body: { domain: fresh() } } : {};
      for (const user of [member, guest]) {
        const res = await app.http.request(method, url, { token: user.token, ...body });
        expect([method, url, res.status, res.body.error.type]).toEqual([method, url, 403, "AUTHORIZATION_ERROR"]);
      }
      // Another organization's admin: the organization does not exist for them.
      const foreign = await app.http.request(method, url, { token: other.admin.token, ...body });
      expect([method, url, foreign.status, foreign.body.error.type]).toEqual([method, url, 404, "ORG_NOT_FOUND"]);
      expect((await app.http.request(method, url, body)).status).toBe(401);
    }
    // Their own organization in the path, this one's domain id: not found either.
    expect((await app.http.post(path(other.org.id, `/${claim.id}/verify`), {}, { token: other.admin.token })).body.error.type).toBe("DOMAIN_NOT_FOUND");
    expect((await app.http.delete(path(other.org.id, `/${claim.id}`), { token: other.admin.token })).body.error.type).toBe("DOMAIN_NOT_FOUND");
    expect((await app.http.delete(path(org.id, "/not-a-uuid"), { token: admin.token })).body.error.type).toBe("DOMAIN_NOT_FOUND");
    const gql = await app.http.gql("mutation($orgId: ID!, $id: ID!) { removeOrganizationDomain(orgId: $orgId, domainId: $id) { id } }", { orgId: org.id, id: claim.id }, { token: member.token });
    expect(gql.errors[0].extensions.code).toBe("AUTHORIZATION_ERROR");

    // An operator who is no member manages it; an unknown organization is still not found.
    const operator = await newSuperadmin(app);
    expect((await app.http.get(path(org.id), { token: operator.token })).body.data.domains.map((d: { id: string }) => d.id)).toEqual([claim.id]);
    const removed = await app.http.delete(path(org.id, `/${claim.id}`), { token: operator.token });
    expect([removed.status, removed.body.data.domain.id]).toEqual([200, claim.id]);
    expect((await app.http.get(path("00000000-0000-4000-8000-000000000001"), { token: operator.token })).body.error.type).toBe("ORG_NOT_FOUND");
    const outsider = await newUser(app);
    await newOrg(app, outsider);
    expect((await app.http.get(path(org.id), { token: outsider.token })).body.error.type).toBe("ORG_NOT_FOUND");
  });
});

describe("verifying under load", () => {
  it("20 parallel verifications leave one verified row and one record of it; the organization's lookups are rate-limited", async () => {
    const { org, admin } = await orgWithRoles(app);
    const claim = (await app.http.post(path(org.id), { domain: fresh() }, { token: admin.token })).body.data.domain;
    await publish(claim);
    const answers = await Promise.all(Array.from({ length: 20 }, () => app.http.post(path(org.id, `/${claim.id}/verify`), {}, { token: admin.token })));
    expect(answers.map((r) => r.status)).toEqual(Array(20).fill(200));
    expect(new Set(answers.map((r) => r.body.data.domain.status))).toEqual(new Set(["verified"]));
    const rows = resultRows<{ status: string; verified_at: Date }>(await app.container.db.execute(sql`select status, verified_at from organization_domains where organization_id = ${org.id}`));
    expect(rows).toHaveLength(1);
    expect(rows[0]!.status).toBe("verified");
    expect(new Set(answers.map((r) => r.body.data.domain.verified_at))).toEqual(new Set([new Date(rows[0]!.verified_at).toISOString()]));
    expect((await orgAudit(org.id)).filter((r) => r.action === "org.domain.verified")).toHaveLength(1);

    // 25 lookups an hour per organization (this app's setting): the 26th is refused before DNS is asked.
    const more = await Promise.all(Array.from({ length: 6 }, () => app.http.post(path(org.id, `/${claim.id}/verify`), {}, { token: admin.token })));
    expect(more.map((r) => r.status).sort()).toEqual([200, 200, 200, 200, 200, 429]);
    expect(more.find((r) => r.status === 429)!.body.error.type).toBe("RATE_LIMIT_EXCEEDED");
  });
});

describe("the lookup", () => {
  it("tells a DNS answer (no record, another value) from a server that cannot be asked, which never counts against a domain", async () => {
    const lookup = createChallengeLookup({ resolvers: [dns.server], timeoutMs: 1000 });
    const domain = fresh("lookup");
    expect(await lookup(domain, "tok")).toMatchObject({ found: false, definitive: true });
    // A value over 255 bytes is published as several strings of one record: they are joined.
    const long = "x".repeat(300);
    await dns.setTxt({ [`_keyward-verification.${domain}`]: [`keyward-verification=${long}`] });
    expect(await lookup(domain, long)).toEqual({ found: true });
    expect(await lookup(domain, "tok")).toMatchObject({ found: false, definitive: true });
    // Nothing listens there: refused or timed out, within the configured bound.
    const started = Date.now();
    const down = await createChallengeLookup({ resolvers: ["127.0.0.1:9"], timeoutMs: 300 })(domain, long);
    expect(down).toMatchObject({ found: false, definitive: false });
    expect(Date.now() - started).toBeLessThan(5000);
  });
});

describe("the periodic re-check", () => {
  it("keeps a domain whose record stays, and lapses one whose record is missing on three checks in a row", async () => {
    const { org, admin } = await orgWithRoles(app);
    const kept = (await app.http.post(path(org.id), { domain: fresh("kept") }, { token: admin.token })).body.data.domain;
    const gone = (await app.http.post(path(org.id), { domain: fresh("gone") }, { token: admin.token })).body.data.domain;
    await publish(kept);
    await publish(gone);
    for (const c of [kept, gone]) expect((await app.http.post(path(org.id, `/${c.id}/verify`), {}, { token: admin.token })).body.data.domain.status).toBe("verified");
    await dns.setTxt({ [gone.record_name]: null });
    // Read from the table: the admin's session does not outlive the days the clock skips.
    const status = async () => {
      const rows = resultRows<{ id: string; status: string; last_check_error: string | null; next_check_at: Date | null }>(
        await app.container.db.execute(sql`select id, status, last_check_error, next_check_at from organization_domains where organization_id = ${org.id}`),
      );
      return (id: string) => rows.find((r) => r.id === id) ?? expect.fail(`no row ${id}`);
    };

    // Nothing is due before the interval has passed.
    await app.services.domains.recheckDue();
    expect((await status())(gone.id).status).toBe("verified");
    expect((await orgAudit(org.id)).map((r) => r.action)).not.toContain("org.domain.recheck_failed");

    for (const round of [1, 2]) {
      app.clock.advance(DAY + 60);
      expect(await app.services.domains.recheckDue()).toBeGreaterThanOrEqual(2);
      const now = await status();
      expect([round, now(gone.id).status, now(kept.id).status]).toEqual([round, "verified", "verified"]);
      expect(now(gone.id).last_check_error).toContain("No TXT record");
      expect(now(kept.id).last_check_error).toBeNull();
    }
    app.clock.advance(DAY + 60);
    await app.services.domains.recheckDue();
    const after = await status();
    expect(after(gone.id)).toMatchObject({ status: "lapsed", next_check_at: null });
    expect(after(kept.id).status).toBe("verified");
    expect(await app.services.domains.findVerifiedOrganizationForEmail(`carol@${gone.domain}`)).toBeNull();
    expect(await app.services.domains.findVerifiedOrganizationForEmail(`carol@${kept.domain}`)).toBe(org.id);
    const trail = (await orgAudit(org.id)).filter((r) => r.metadata.domain === gone.domain).map((r) => [r.action, r.metadata.consecutiveFailures ?? null]);
    expect(trail).toEqual([
      ["org.domain.added", null],
      ["org.domain.verified", null],
      ["org.domain.recheck_failed", 1],
      ["org.domain.recheck_failed", 2],
      ["org.domain.lapsed", 3],
    ]);

    // A lapsed domain is proved again like a new one, once the record is back.
    await publish(gone);
    const again = await login(app, admin.email, admin.password);
    expect((await app.http.post(path(org.id, `/${gone.id}/verify`), {}, { token: again.body.data.token })).body.data.domain.status).toBe("verified");
    expect(await app.services.domains.findVerifiedOrganizationForEmail(`carol@${gone.domain}`)).toBe(org.id);
  });
});
