import "reflect-metadata";
import { createServer, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { loadConfig } from "../src/config/index.js";
import { createContainer } from "../src/container.js";
import { createApp } from "../src/server.js";
import { screenDocument } from "../test/helpers/screen-documents.js";

/**
 * The web app's screens as bench scenarios: each screen's own documents (read from web/src, as
 * test/integration/screen-statements.test.ts reads them), the statements each request makes, and
 * the bound a run fails above (the same bounds as that test).
 */
export interface ScreenRequest {
  name: string;
  /** The JSON body the web app posts to /graphql. */
  body: string;
  /** A run fails when one request of this document makes more statements than this. */
  bound: number;
}

/** The home screen: the one query every person sends first. */
export const homeScreen = (): ScreenRequest[] => [{ name: "Home", body: JSON.stringify({ query: screenDocument("routes/home.tsx", "Home") }), bound: 14 }];

/** An organization's members screen as its admin opens it: the members, and their two-step standing. */
export const membersScreen = (orgId: string): ScreenRequest[] =>
  ["OrgMembers", "OrgMembersCompliance"].map((name) => ({
    name,
    body: JSON.stringify({ query: screenDocument("routes/orgs/members.tsx", name), variables: { orgId } }),
    bound: 14,
  }));

/**
 * An organization of `members` members besides its owner (`auth`): addresses the organization
 * provisions (each an account awaiting activation, as the members screen lists them), under a
 * policy that requires two-step sign-in, so each has a standing to compute.
 */
export async function organizationOf(base: string, auth: Record<string, string>, members: number): Promise<string> {
  const call = async (path: string, body: unknown) => {
    const res = await fetch(base + path, { method: "POST", headers: auth, body: JSON.stringify(body) });
    const json = (await res.json()) as any;
    if (!res.ok || json.errors) throw new Error(`${path}: ${res.status} ${JSON.stringify(json.errors ?? json.error ?? json)}`);
    return json.data;
  };
  const org = (await call("/api/v1/organizations", { name: `Members ${process.pid}` })).organization;
  let next = 0;
  await Promise.all(
    Array.from({ length: 4 }, async () => {
      while (next < members) {
        const i = next++;
        await call(`/api/v1/organizations/${org.id}/members`, { email: `member-${process.pid}-${i}@example.com`, role: "member", full_name: `Member ${i}` });
      }
    }),
  );
  await call("/graphql", {
    query: "mutation($orgId: ID!) { updateOrgSecurityPolicy(orgId: $orgId, input: { mfaPolicyMode: \"required\", mfaGracePeriodDays: 14 }) { mfaPolicyMode } }",
    variables: { orgId: org.id },
  });
  return org.id;
}

/**
 * Counts the statements one request makes, on a second Keyward in this process over the same
 * PostgreSQL database and Redis (the server under load is a separate process the bench cannot
 * hook): each document is sent once to fill what it caches, then twice more, and the fewer of the
 * two counts is kept (a job's poll or a periodic write beside it lands in one run only, a read per
 * row in both). PostgreSQL only: the embedded database is a directory only one process may open.
 */
export async function countStatements(env: Record<string, string>, auth: Record<string, string>, screens: ScreenRequest[]): Promise<Map<string, number>> {
  let counting = false;
  let count = 0;
  const server: Server = createServer();
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const port = (server.address() as AddressInfo).port;
  const config = loadConfig({ ...process.env, ...env, PORT: String(port), PUBLIC_URL: `http://127.0.0.1:${port}`, LOG_LEVEL: "error" });
  const container = await createContainer(config, { onStatement: () => void (counting && count++) });
  const { app, stop } = await createApp(container);
  server.on("request", app);
  const counts = new Map<string, number>();
  try {
    for (const screen of screens) {
      const send = async () => {
        const res = await fetch(`http://127.0.0.1:${port}/graphql`, { method: "POST", headers: auth, body: screen.body });
        const json = (await res.json()) as any;
        if (res.status !== 200 || json.errors) throw new Error(`${screen.name}: ${res.status} ${JSON.stringify(json.errors)}`);
      };
      await send();
      let fewest = Number.POSITIVE_INFINITY;
      for (let i = 0; i < 2; i++) {
        count = 0;
        counting = true;
        try {
          await send();
        } finally {
          counting = false;
        }
        fewest = Math.min(fewest, count);
      }
      counts.set(screen.name, fewest);
    }
  } finally {
    server.closeAllConnections();
    await new Promise<void>((resolve) => server.close(() => resolve()));
    await stop();
    await container.close();
  }
  return counts;
}
