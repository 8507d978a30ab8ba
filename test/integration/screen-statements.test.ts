import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startTestApp, type TestApp } from "../helpers/app.js";
import { statementCounter } from "../helpers/statements.js";
import { organizationScreenQueries, screenDocument } from "../helpers/screen-documents.js";
import { newOrg } from "../factories/orgs.js";
import { newUser, PASSWORD, uniqueEmail, type TestUser } from "../factories/users.js";
import { linkIn, tokenFrom } from "../helpers/smtp-sink.js";

/**
 * The web app's screens read with a bounded number of database statements, whatever the
 * organization's size (issue 32, ARCHITECTURE rule 18): each screen's own document (read from
 * web/src) is run for an organization of 10 members and one of 200, and both make the same number
 * of statements. A resolver that read per member (N+1) would make about 190 more.
 */
let app: TestApp;
let owner: TestUser;
let small: { id: string };
let large: { id: string };
const counter = statementCounter();

beforeAll(async () => {
  app = await startTestApp({ RATE_LIMIT_ENABLED: "false" }, { onStatement: counter.onStatement });
  owner = await newUser(app, { fullName: "Owner" });
  small = await newOrg(app, owner, "Small Org");
  large = await newOrg(app, owner, "Large Org");
  // Members the organization provisions: it adds the address, the person activates the account.
  const add = async (orgId: string, n: number) => {
    const emails = Array.from({ length: n }, (_, i) => uniqueEmail(`m${i}`));
    for (const email of emails) {
      const res = await app.http.post(`/api/v1/organizations/${orgId}/members`, { email, role: "member", full_name: `Member ${email}` }, { token: owner.token });
      if (res.status !== 201) throw new Error(`add member: ${res.status} ${res.text}`);
    }
    while ((await app.flushEmails()) > 0);
    await Promise.all(
      emails.map(async (email) => {
        const code = tokenFrom(linkIn(app.mail.lastWith(email, "/activate?code="), "/activate"), "code");
        const activated = await app.http.post("/api/v1/auth/activate", { code, password: PASSWORD });
        if (activated.status !== 200) throw new Error(`activate: ${activated.status} ${activated.text}`);
      }),
    );
  };
  await add(small.id, 9);
  await add(large.id, 200);
}, 180_000);
afterAll(() => app?.close());

/** The statements of the last count, for a failure's message. */
let lastStatements: string[] = [];

/** The statements one GraphQL request makes: the fewest of two runs (test/helpers/statements.ts). */
async function statementsFor(query: string, variables: Record<string, unknown>): Promise<number> {
  const { count, sql } = await counter.fewest(async () => {
    const res = await app.http.gql(query, variables, { token: owner.token });
    expect(res.errors ?? [], JSON.stringify(res.errors)).toEqual([]);
  });
  lastStatements = sql;
  return count;
}

describe("a screen's statements do not grow with the organization", () => {
  it("members: the same count for 10 and for 200 members, for each of the screen's reads", async () => {
    const query = screenDocument("routes/orgs/members.tsx", "OrgMembers");
    const members = await app.http.gql(query, { orgId: large.id }, { token: owner.token });
    expect(members.data.members).toHaveLength(201);
    expect((await app.http.gql(query, { orgId: small.id }, { token: owner.token })).data.members).toHaveLength(10);
    for (const name of ["OrgMembers", "OrgMembersCompliance", "OrgInvites"]) {
      const doc = screenDocument("routes/orgs/members.tsx", name);
      const [ten, twoHundred] = [await statementsFor(doc, { orgId: small.id }), await statementsFor(doc, { orgId: large.id })];
      console.log(`members screen, ${name}: ${ten} statements for 10 members, ${twoHundred} for 201`);
      expect(twoHundred, name).toBe(ten);
      expect(ten, name).toBeLessThan(15);
    }
  });

  it("home, for an organization's admin: the same count for 10 and for 200 members", async () => {
    const query = screenDocument("routes/home-attention.tsx", "OrgAttention");
    const [ten, twoHundred] = [await statementsFor(query, { orgId: small.id }), await statementsFor(query, { orgId: large.id })];
    console.log(`home, an organization's attention: ${ten} statements for 10 members, ${twoHundred} for 201`);
    expect(twoHundred).toBe(ten);
    expect(ten).toBeLessThan(20);
  });

  it("every screen's query of an organization: the same count for 10 and for 200 members", async () => {
    // These two ask the organization's ZeroTier controller (none is configured here): the networks tests cover them.
    const needsController = new Set(["AvailableControllerNetworks", "CheckNetworkController"]);
    const queries = organizationScreenQueries().filter((q) => !needsController.has(q.name));
    expect(queries.length).toBeGreaterThan(15);
    const grown: string[] = [];
    for (const { file, name, query } of queries) {
      const ten = await statementsFor(query, { orgId: small.id });
      const tenStatements = lastStatements;
      const twoHundred = await statementsFor(query, { orgId: large.id });
      if (twoHundred !== ten) {
        const extra = lastStatements.filter((sql) => !tenStatements.includes(sql)).map((sql) => sql.slice(0, 160));
        grown.push(`${file} ${name}: ${ten} statements for 10 members, ${twoHundred} for 201; new: ${extra.join(" | ")}`);
      }
    }
    expect(grown, grown.join("\n")).toEqual([]);
  });

  it("home: the same count whatever the size of the organizations", async () => {
    const query = screenDocument("routes/home.tsx", "Home");
    const count = await statementsFor(query, {});
    expect(count).toBeLessThan(15);
  });
});
