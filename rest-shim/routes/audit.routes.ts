import { once } from "node:events";
import type { Response } from "express";
import type { Services } from "../../src/container.js";
import { paginationSchema } from "../../src/lib/pagination.js";
import { Verbatim } from "../../src/lib/strings.js";
import { activitySchema, chainExportSchema, type AuditEntryView, type ChainExport } from "../../src/modules/audit/index.js";
import { sendData } from "../envelope.js";
import { param, queryInput, type RouteDef } from "../route.js";
import { data } from "../views/index.js";

/** Writes an export as it is read, waiting on the socket: a large chain never sits in memory. */
async function stream(res: Response, file: ChainExport): Promise<void> {
  res.status(200).type(file.contentType).setHeader("Content-Disposition", `attachment; filename="${file.filename}"`);
  try {
    for await (const line of file.lines) if (!res.write(line)) await once(res, "drain");
    res.end();
  } catch (err) {
    // Headers are gone: a cut-off download is the only honest answer left.
    res.destroy(err as Error);
  }
}

// The activity query as documented: a cursor (limit, cursor) or numbered pages (page, per_page).
const activityQueryDoc = activitySchema.extend({ page: paginationSchema.shape.page.unwrap().optional(), perPage: paginationSchema.shape.perPage.unwrap().optional() });

const EXPORT_TYPES = ["application/x-ndjson", "text/csv"];
const EXPORT_SUMMARY = "records with seq, prev_hash and hash after the signed base checkpoint and head (?format=jsonl|csv), streamed";

/** Audit: an organization's activity (its admins, or an API key with audit:read), and the tamper-evident chains: verification and export (superadmins; organization admins export their own). */
export const auditRoutes = (s: Services): RouteDef[] => [
  {
    method: "get", path: "/admin/audit/verify", data: data.auditVerification, tag: "superadmin", auth: "superadmin",
    summary: "Verify the global audit chain and every organization's, with the signatures on heads and checkpoints; names the first broken link",
    handle: async (req, res) => {
      const report = await s.auditVerify.verify(req.ctx);
      sendData(res, 200, report.ok ? "Audit chains intact" : "Audit chain broken", { verification: report });
    },
  },
  {
    method: "get", path: "/admin/audit/export", tag: "superadmin", auth: "superadmin", query: chainExportSchema, produces: EXPORT_TYPES,
    summary: `The global chain, or one organization's (?organization_id=): ${EXPORT_SUMMARY}`,
    handle: async (req, res) => stream(res, await s.auditExport.exportChain(req.ctx, queryInput(req))),
  },
  {
    method: "post", path: "/organizations/:orgId/audit/verification", data: data.auditChainCheck, tag: "organizations", auth: "user", org: "admin",
    summary: "Verify the organization's audit chain from its signed checkpoint to its signed head (signatures included); the outcome is kept",
    handle: async (req, res) => {
      const check = await s.auditVerify.verifyOrganization(req.ctx, param(req, "orgId"));
      sendData(res, 200, check.ok ? "Audit chain intact" : "Audit chain broken", { check });
    },
  },
  {
    method: "get", path: "/organizations/:orgId/audit/verification", data: data.lastAuditChainCheck, tag: "organizations", auth: "user", org: "admin",
    summary: "The organization's audit chain as last verified, by its admins or an operator (check: null before the first)",
    handle: async (req, res) => sendData(res, 200, "Last verification", { check: await s.auditVerify.organizationCheck(req.ctx, param(req, "orgId")) }),
  },
  {
    method: "get", path: "/organizations/:orgId/audit/export", tag: "organizations", auth: "user", org: "admin", query: chainExportSchema.pick({ format: true }), produces: EXPORT_TYPES,
    summary: `The organization's audit chain: ${EXPORT_SUMMARY}`,
    handle: async (req, res) => stream(res, await s.auditExport.exportOrganization(req.ctx, param(req, "orgId"), queryInput(req))),
  },
  {
    method: "get", path: "/organizations/:orgId/audit-logs", tag: "organizations", auth: "user", org: "admin", apiKey: "audit:read", query: activityQueryDoc,
    summary: "The organization's activity, newest first (?user_id=&action=&limit=&cursor=; next_cursor pages on; or the original API's ?page=&per_page=, with count and pages)",
    handle: async (req, res) => {
      const view = (items: AuditEntryView[]) => items.map((e) => ({ ...e, metadata: new Verbatim(e.metadata) }));
      // Numbered pages when the caller asks for them (scripts written against the original API).
      if ("page" in req.query || "per_page" in req.query) {
        const { items, ...page } = await s.activity.listPage(req.ctx, param(req, "orgId"), queryInput(req));
        return sendData(res, 200, "Activity", { auditLogs: view(items), ...page });
      }
      const { items, nextCursor } = await s.activity.list(req.ctx, param(req, "orgId"), queryInput(req));
      sendData(res, 200, "Activity", { auditLogs: view(items), count: items.length, nextCursor });
    },
  },
];
