import { z } from "zod";
import type { Services } from "../../src/container.js";
import { date, named, sameShape, type Returns } from "./same-shape.js";

const chainBreak = named(
  "AuditChainBreak",
  z.object({
    chain: z.string(),
    kind: z.enum(["edited", "deleted", "inserted", "reordered", "bad_signature"]),
    seq: z.number().int(),
    recordId: z.string().nullable(),
    detail: z.string(),
  }),
);

const chainReport = named(
  "AuditChainReport",
  z.object({ chain: z.string(), ok: z.boolean(), fromSeq: z.number().int(), headSeq: z.number().int(), records: z.number().int(), break: chainBreak.nullable() }),
);

/** The answer of GET /admin/audit/verify: the global chain, every organization's, the first broken link. */
export const auditVerificationView = named(
  "AuditVerification",
  z.object({
    ok: z.boolean(),
    checkedAt: date,
    global: chainReport,
    organizationsChecked: z.number().int(),
    brokenOrganizations: z.array(chainReport),
    firstBreak: chainBreak.nullable(),
    unchained: z.number().int(),
  }),
);
sameShape<z.output<typeof auditVerificationView>, Returns<Services["auditVerify"]["verify"]>>();

/** An organization's chain as last verified (GET/POST /organizations/:orgId/audit/verification). */
export const auditChainCheckView = named("AuditChainCheck", chainReport.extend({ checkedAt: date }));
sameShape<z.output<typeof auditChainCheckView>, Returns<Services["auditVerify"]["verifyOrganization"]>>();
