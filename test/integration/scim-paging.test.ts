import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { matches, parseFilter } from "../../src/modules/scim/scim-filter.js";
import { GROUP_CATALOG } from "../../src/modules/scim/scim-groups.service.js";
import { USER_CATALOG } from "../../src/modules/scim/scim-user.js";
import { startTestApp, type TestApp } from "../helpers/app.js";
import { newScimUser, patchOf, scimClient, type ScimClient } from "../helpers/scim.js";
import { statementCounter } from "../helpers/statements.js";

/**
 * Issue 36: GET /Users and GET /Groups read one page in SQL (the filter, the count, the page, and a
 * page's group members in one statement), whatever the organization's size. The answers are the
 * ones the filter gives on the resources as answered (`matches`), checked here filter by filter on
 * an organization of 210 Users, and the statement count is the same for 5 Users as for 210.
 */
const GROUP = "urn:ietf:params:scim:schemas:core:2.0:Group";
const LARGE = 210;
let app: TestApp;
let large: ScimClient;
let small: ScimClient;
const counter = statementCounter();

async function populate(c: ScimClient, n: number, groups: number): Promise<string[]> {
  const ids: string[] = new Array(n);
  // Four at a time: creation order (the list's order) is still fixed by index within each batch's wait.
  for (let i = 0; i < n; i += 4) {
    await Promise.all(
      Array.from({ length: Math.min(4, n - i) }, async (_, k) => {
        const j = i + k;
        const extra: Record<string, unknown> = {
          displayName: j % 7 === 0 ? `Ädmin ${j}` : `Person ${String(j).padStart(3, "0")}`,
          name: { givenName: j % 3 === 0 ? "Ann" : "Bob", familyName: `Fam${j % 10}` },
          ...(j % 2 === 0 ? { externalId: `EXT-${j}` } : {}),
          ...(j % 5 === 0 ? { active: false } : {}),
        };
        const res = await c.post("/Users", newScimUser(c.at(`p${String(j).padStart(3, "0")}.x_y%${j % 4}`), extra));
        if (res.status !== 201) throw new Error(`create ${j}: ${res.status} ${res.text}`);
        ids[j] = res.body.id;
      }),
    );
  }
  for (let g = 0; g < groups; g++) {
    const members = ids.filter((_, j) => j % groups === g).map((value) => ({ value }));
    const res = await c.post("/Groups", { schemas: [GROUP], displayName: `Team ${String(g).padStart(2, "0")}`, members });
    if (res.status !== 201) throw new Error(`group ${g}: ${res.status} ${res.text}`);
  }
  return ids;
}

beforeAll(async () => {
  app = await startTestApp({ RATE_LIMIT_ENABLED: "false" }, { onStatement: counter.onStatement });
  [large, small] = [await scimClient(app), await scimClient(app)];
  await populate(large, LARGE, 30);
  await populate(small, 5, 3);
}, 240_000);
afterAll(() => app?.close());

/** Every resource of a list, page by page (count=pageSize), checking the pages' own arithmetic. */
async function walk(c: ScimClient, path: string, pageSize: number, query = ""): Promise<Array<Record<string, unknown>>> {
  const out: Array<Record<string, unknown>> = [];
  for (let start = 1; ; start += pageSize) {
    const res = await c.get(`${path}?startIndex=${start}&count=${pageSize}${query}`);
    expect(res.status, res.text).toBe(200);
    expect(res.body.startIndex).toBe(start);
    expect(res.body.itemsPerPage).toBe(res.body.Resources.length);
    out.push(...res.body.Resources);
    if (start + pageSize > res.body.totalResults) {
      expect(out).toHaveLength(res.body.totalResults);
      return out;
    }
    expect(res.body.Resources).toHaveLength(pageSize);
  }
}

const statementsOf = async (run: () => Promise<unknown>): Promise<number> => (await counter.fewest(run)).count;

describe("paging in SQL", () => {
  it("pages 210 Users oldest first, each exactly once, and caps count at 200", async () => {
    const all = await walk(large, "/Users", 50);
    expect(all).toHaveLength(LARGE);
    expect(new Set(all.map((r) => r.id)).size).toBe(LARGE);
    const created = all.map((r) => (r.meta as { created: string }).created);
    expect([...created].sort()).toEqual(created);
    const capped = await large.get("/Users?count=1000");
    expect(capped.body).toMatchObject({ totalResults: LARGE, itemsPerPage: 200 });
    const tail = await large.get("/Users?startIndex=201&count=50");
    expect(tail.body).toMatchObject({ totalResults: LARGE, startIndex: 201, itemsPerPage: 10 });
    expect(tail.body.Resources.map((r: { id: string }) => r.id)).toEqual(all.slice(200).map((r) => r.id));
    expect((await large.get("/Users?startIndex=500")).body).toMatchObject({ totalResults: LARGE, itemsPerPage: 0, Resources: [] });
    expect((await large.get("/Users?count=0")).body).toMatchObject({ totalResults: LARGE, itemsPerPage: 0, Resources: [] });
  });

  it("answers every filter as the filter reads on the resources, page by page", async () => {
    const all = await walk(large, "/Users", 200);
    const u = (j: number) => large.at(`p${String(j).padStart(3, "0")}.x_y%${j % 4}`);
    const filters = [
      `userName eq "${u(17).toUpperCase()}"`,
      `userName sw "P01"`,
      `userName co "_Y%1"`,
      `userName ew "%3@${large.domain}"`,
      `userName ne "${u(3)}"`,
      `emails.value sw "p1"`,
      `emails eq "${u(42)}"`,
      `emails[type eq "work" and value co "0.x"]`,
      `emails[primary eq true]`,
      `emails.type eq "WORK"`,
      `externalId eq "EXT-10"`,
      `externalId eq "ext-10"`,
      `externalId sw "EXT-1"`,
      `externalId pr`,
      `not (externalId pr)`,
      `displayName co "ädmin"`,
      `displayName sw "person 1" or displayName ew "7"`,
      `name.givenName eq "ann" and active eq false`,
      `name.familyName ne "Fam3"`,
      `name.formatted co "ann fam"`,
      `active eq true and (userName sw "p00" or externalId eq "EXT-100")`,
      `id eq "${all[5]!.id}"`,
      `id eq "${String(all[5]!.id).toUpperCase()}"`,
      `userName eq 5`,
      `userName ne null`,
      `active ne false`,
      // Parts SQL cannot answer (ordering, dates) are finished on the rows the rest lets through.
      `userName gt "${u(200)}" and active eq true`,
      `meta.created pr and userName sw "p20"`,
      `displayName le "Person 010" or userName eq "${u(1)}"`,
    ];
    let between = 0;
    for (const f of filters) {
      const parsed = parseFilter(f, USER_CATALOG);
      const expected = all.filter((r) => matches(parsed, r, USER_CATALOG)).map((r) => r.id);
      const got = (await walk(large, "/Users", 40, `&filter=${encodeURIComponent(f)}`)).map((r) => r.id);
      expect(got, f).toEqual(expected);
      if (expected.length > 0 && expected.length < LARGE) between++;
    }
    // The cases above are mostly neither empty nor everyone.
    expect(between).toBeGreaterThanOrEqual(22);
  });

  it("answers Group filters as they read, with members loaded for the page", async () => {
    const all = await walk(large, "/Groups", 7);
    expect(all).toHaveLength(30);
    expect(all.map((g) => g.displayName)).toEqual(Array.from({ length: 30 }, (_, g) => `Team ${String(g).padStart(2, "0")}`));
    expect(all.every((g) => (g.members as unknown[]).length === 7)).toBe(true);
    const someone = (all[4]!.members as Array<{ value: string; display: string }>)[2]!;
    for (const f of [
      `displayName eq "team 04"`,
      `displayName sw "Team 1"`,
      `members[value eq "${someone.value}"]`,
      `members.value eq "${someone.value}"`,
      `members.display eq "${someone.display.toUpperCase()}"`,
      `members pr and displayName co "2"`,
      `externalId pr`,
      `externalId ne "x" and displayName ew "9"`,
      `members.value ne "${someone.value}" and displayName sw "Team 0"`,
      `id eq "${all[3]!.id}"`,
      `meta.lastModified pr and displayName sw "Team 2"`,
    ]) {
      const parsed = parseFilter(f, GROUP_CATALOG);
      const expected = all.filter((r) => matches(parsed, r, GROUP_CATALOG)).map((r) => r.id);
      expect((await walk(large, "/Groups", 4, `&filter=${encodeURIComponent(f)}`)).map((r) => r.id), f).toEqual(expected);
    }
  });
});

describe("statements do not grow with the organization", () => {
  it("GET /Users: the same count for 5 Users and 210, filtered or not", async () => {
    for (const q of ["", "?count=200", `?filter=${encodeURIComponent('userName sw "p0" and active eq true')}&count=3`, `?filter=${encodeURIComponent('emails[value co "@"]')}&startIndex=2&count=2`]) {
      // (Every User matches "@", so both organizations have a second page: a page past the end costs one statement less, and
      // a filter whose matches depend on the test's random domain, such as co "1", would count that instead.)
      const [few, many] = [await statementsOf(() => small.get(`/Users${q}`)), await statementsOf(() => large.get(`/Users${q}`))];
      console.log(`GET /Users${q}: ${few} statements for 5 Users, ${many} for ${LARGE}`);
      expect(many, q).toBe(few);
      expect(few, q).toBeLessThanOrEqual(6);
    }
  });

  it("GET /Groups and one Group: the same count for 3 departments and 30", async () => {
    const q = "?count=100";
    const [few, many] = [await statementsOf(() => small.get(`/Groups${q}`)), await statementsOf(() => large.get(`/Groups${q}`))];
    console.log(`GET /Groups: ${few} statements for 3 departments, ${many} for 30`);
    expect(many).toBe(few);
    expect(few).toBeLessThanOrEqual(6);
    const [smallGroup, largeGroup] = [(await small.get("/Groups?count=1")).body.Resources[0].id, (await large.get("/Groups?count=1")).body.Resources[0].id];
    expect(await statementsOf(() => large.get(`/Groups/${largeGroup}`))).toBe(await statementsOf(() => small.get(`/Groups/${smallGroup}`)));
  });

  it("a Group's member change: the same count for a department of 7 in 210 Users as of 1 in 5", async () => {
    const change = async (c: ScimClient) => {
      const [group] = (await c.get(`/Groups?filter=${encodeURIComponent('displayName eq "Team 01"')}`)).body.Resources;
      const user = group.members[0].value as string;
      // Adding a member already there, by id: the change reads the Users it names, not the organization's.
      return statementsOf(async () => {
        const res = await c.patch(`/Groups/${group.id}`, patchOf({ op: "add", path: "members", value: [{ value: user }] }));
        expect(res.status, res.text).toBe(200);
      });
    };
    const [few, many] = [await change(small), await change(large)];
    console.log(`PATCH /Groups/{id}: ${few} statements in 5 Users, ${many} in ${LARGE}`);
    expect(many).toBe(few);
    // Another organization's User is still refused.
    const [group] = (await large.get("/Groups?count=1")).body.Resources;
    const outsider = (await small.get("/Users?count=1")).body.Resources[0].id;
    expect((await large.patch(`/Groups/${group.id}`, patchOf({ op: "add", path: "members", value: [{ value: outsider }] }))).status).toBe(400);
  });
});
