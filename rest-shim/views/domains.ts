import { z } from "zod";
import type { Services } from "../../src/container.js";
import { date, type Item, named, type Returns, sameShape } from "./same-shape.js";

// --- verified domains ---
export const domainView = named("OrganizationDomain", z.object({
  id: z.string(),
  organizationId: z.string(),
  domain: z.string().describe("Lower case, internationalised names in their xn-- form"),
  status: z.enum(["pending", "verified", "lapsed"]).describe("pending: not proved yet; verified: the TXT record was found; lapsed: it went missing on consecutive re-checks"),
  recordName: z.string().describe("Where the TXT record goes: _keyward-verification.<domain>"),
  recordValue: z.string().describe("What it must say: keyward-verification=<token>"),
  verifiedAt: date.nullable(),
  lastCheckedAt: date.nullable(),
  lastCheckError: z.string().nullable().describe("Why the last check did not find the record"),
  nextCheckAt: date.nullable(),
  createdBy: z.string().nullable(),
  createdAt: date,
}));
sameShape<z.output<typeof domainView>, Item<Returns<Services["domains"]["list"]>>>();
sameShape<z.output<typeof domainView>, Returns<Services["domains"]["verify"]>>();
