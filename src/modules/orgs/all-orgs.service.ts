import { z } from "zod";
import type { Db } from "../../infra/db.js";
import { paginationSchema, toPage, type Page } from "../../lib/pagination.js";
import type { RequestContext } from "../../lib/request-context.js";
import { parseInput } from "../../lib/validation.js";
import { allOrgsRepository } from "./all-orgs.repository.js";
import { requireSuperadmin } from "../access/index.js";

export const allOrgsQuerySchema = paginationSchema.extend({ q: z.string().trim().max(255).optional() });
export type AllOrgsQueryInput = z.input<typeof allOrgsQuerySchema>;

export interface AdminOrganizationView {
  id: string;
  name: string;
  slug: string;
  description: string | null;
  memberCount: number;
  owners: Array<{ id: string; email: string; fullName: string | null; deleted: boolean }>;
  createdAt: Date;
}

/**
 * Every organization of the installation with its member count and owners, for its operators
 * (superadmins, who need not be members). Three statements whatever the page's size.
 */
export class AllOrganizationsService {
  constructor(private readonly db: Db) {}

  async list(ctx: RequestContext, input: AllOrgsQueryInput): Promise<Page<AdminOrganizationView>> {
    requireSuperadmin(ctx);
    const q = parseInput(allOrgsQuerySchema, input ?? {});
    const { rows, total } = await allOrgsRepository.page(this.db, { text: q.q || undefined, limit: q.perPage, offset: (q.page - 1) * q.perPage });
    const owners = await allOrgsRepository.ownersOf(this.db, rows.map((r) => r.id));
    const items = rows.map((o) => ({
      id: o.id,
      name: o.name,
      slug: o.slug,
      description: o.description,
      memberCount: o.memberCount,
      owners: owners.filter((w) => w.organizationId === o.id).map((w) => ({ id: w.id, email: w.email, fullName: w.fullName, deleted: false })),
      createdAt: o.createdAt,
    }));
    return toPage(items, total, q.page, q.perPage);
  }
}
