import { z } from "zod";
import type { Services } from "../../src/container.js";
import { date, named, type Returns, sameShape } from "./same-shape.js";

const scimActivityError = named("ScimActivityError", z.object({
  at: date,
  status: z.number().int().describe("The HTTP status answered"),
  scimType: z.string().nullable().describe("The RFC 7644 scimType, when there is one"),
  detail: z.string(),
  request: z.string().describe('Method and path under /scim/v2 ("PATCH /Users/…")'),
}));

const scimKeyActivity = named("ScimKeyActivity", z.object({
  apiKeyId: z.string(),
  name: z.string(),
  prefix: z.string(),
  hasScimScope: z.boolean(),
  revokedAt: date.nullable(),
  lastRequestAt: date.nullable().describe("The last SCIM request (reads are recorded at most once a minute)"),
  lastRequest: z.string().nullable(),
  lastWriteAt: date.nullable(),
  lastWrite: z.string().nullable().describe('The last successful write ("PATCH User …")'),
  lastError: scimActivityError.nullable(),
}));

export const scimActivityView = named("ScimActivity", z.object({
  organizationId: z.string(),
  baseUrl: z.string().describe("The SCIM base URL (tenant URL) to paste into Okta or Entra ID"),
  lastRequestAt: date.nullable().describe("The last SCIM request of any key: the last sync"),
  lastWriteAt: date.nullable(),
  lastWrite: z.string().nullable(),
  lastError: scimActivityError.nullable(),
  keys: z.array(scimKeyActivity).describe("Live keys with the scim scope, and any key that called SCIM"),
}));
sameShape<z.output<typeof scimActivityView>, Returns<Services["scimActivity"]["forOrganization"]>>();
