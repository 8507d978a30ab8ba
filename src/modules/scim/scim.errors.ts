/** The SCIM schema URNs this service provider speaks (RFC 7643 §8.7, RFC 7644 §3). */
export const SCIM = {
  user: "urn:ietf:params:scim:schemas:core:2.0:User",
  enterpriseUser: "urn:ietf:params:scim:schemas:extension:enterprise:2.0:User",
  group: "urn:ietf:params:scim:schemas:core:2.0:Group",
  listResponse: "urn:ietf:params:scim:api:messages:2.0:ListResponse",
  patchOp: "urn:ietf:params:scim:api:messages:2.0:PatchOp",
  error: "urn:ietf:params:scim:api:messages:2.0:Error",
  serviceProviderConfig: "urn:ietf:params:scim:schemas:core:2.0:ServiceProviderConfig",
  resourceType: "urn:ietf:params:scim:schemas:core:2.0:ResourceType",
  schema: "urn:ietf:params:scim:schemas:core:2.0:Schema",
} as const;

/** The `scimType` values RFC 7644 §3.12 defines for 400 (and 409 `uniqueness`). */
export type ScimType = "invalidFilter" | "tooMany" | "uniqueness" | "mutability" | "invalidSyntax" | "invalidPath" | "noTarget" | "invalidValue" | "invalidVers" | "sensitive";

/**
 * A SCIM error (RFC 7644 §3.12): what the /scim/v2 door answers in the SCIM error schema. Kept
 * apart from AppError, whose codes are the REST/GraphQL vocabulary.
 */
export class ScimError extends Error {
  constructor(
    readonly status: 400 | 401 | 403 | 404 | 409 | 412 | 413 | 429 | 501,
    readonly detail: string,
    readonly scimType?: ScimType,
  ) {
    super(detail);
    this.name = "ScimError";
  }
}

export const isScimError = (e: unknown): e is ScimError => e instanceof ScimError;

export const ScimErrors = {
  invalidFilter: (detail: string) => new ScimError(400, `Invalid filter: ${detail}`, "invalidFilter"),
  invalidSyntax: (detail: string) => new ScimError(400, detail, "invalidSyntax"),
  invalidValue: (detail: string) => new ScimError(400, detail, "invalidValue"),
  invalidPath: (detail: string) => new ScimError(400, detail, "invalidPath"),
  noTarget: (detail: string) => new ScimError(400, detail, "noTarget"),
  mutability: (detail: string) => new ScimError(400, detail, "mutability"),
  uniqueness: (detail: string) => new ScimError(409, detail, "uniqueness"),
  notFound: (what = "User") => new ScimError(404, `${what} not found`),
  preconditionFailed: () => new ScimError(412, "The resource changed since the version named in If-Match"),
};
