import type { Ctx } from "../context.js";
import type { Result } from "../output.js";

export interface SimpleOrg {
  id: string;
  name: string;
  slug: string;
  role: string;
}

export async function listOrgs(ctx: Ctx): Promise<SimpleOrg[]> {
  return (await ctx.api.get<{ organizations: SimpleOrg[] }>("/users/me/organizations/simple")).organizations;
}

/** `keyward orgs` and `keyward ssh sign --list-orgs`: the ids that --org-id takes. */
export async function orgs(ctx: Ctx): Promise<Result> {
  const list = await listOrgs(ctx);
  const c = ctx.io.out;
  const width = Math.max(4, ...list.map((o) => o.name.length));
  return {
    json: { organizations: list, count: list.length },
    text: list.length
      ? [c.dim(`${"NAME".padEnd(width)}  ROLE     ID`), ...list.map((o) => `${o.name.padEnd(width)}  ${o.role.padEnd(7)}  ${o.id}`)]
      : ["You are not a member of any organization"],
  };
}
