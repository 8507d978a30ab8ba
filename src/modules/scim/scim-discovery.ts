import { SCIM } from "./scim.errors.js";
import { SCIM_MAX_RESULTS } from "./scim-users.service.js";

/**
 * The discovery resources (RFC 7644 §4, RFC 7643 §5-7): static, and saying only what this service
 * provider does.
 */
export function serviceProviderConfig(baseUrl: string) {
  return {
    schemas: [SCIM.serviceProviderConfig],
    documentationUri: "https://github.com/keyward/keyward#scim-provisioning",
    patch: { supported: true },
    bulk: { supported: false, maxOperations: 0, maxPayloadSize: 0 },
    filter: { supported: true, maxResults: SCIM_MAX_RESULTS },
    changePassword: { supported: false },
    sort: { supported: false },
    etag: { supported: true },
    authenticationSchemes: [
      {
        type: "oauthbearertoken",
        name: "Organization API key",
        description: "Authorization: Bearer kwk_… — an organization API key with the scim scope; the key decides the organization",
        primary: true,
      },
    ],
    meta: { resourceType: "ServiceProviderConfig", location: `${baseUrl}/ServiceProviderConfig` },
  };
}

export function resourceTypes(baseUrl: string) {
  return [
    {
      schemas: [SCIM.resourceType],
      id: "User",
      name: "User",
      endpoint: "/Users",
      description: "A managed account of the organization",
      schema: SCIM.user,
      schemaExtensions: [{ schema: SCIM.enterpriseUser, required: false }],
      meta: { resourceType: "ResourceType", location: `${baseUrl}/ResourceTypes/User` },
    },
    {
      schemas: [SCIM.resourceType],
      id: "Group",
      name: "Group",
      endpoint: "/Groups",
      description: "A department of the organization (its SSH principals and certificate policy follow)",
      schema: SCIM.group,
      meta: { resourceType: "ResourceType", location: `${baseUrl}/ResourceTypes/Group` },
    },
  ];
}

const attr = (name: string, o: { type?: string; multiValued?: boolean; required?: boolean; caseExact?: boolean; mutability?: string; returned?: string; uniqueness?: string; description: string; subAttributes?: unknown[] }) => ({
  name,
  type: o.type ?? "string",
  multiValued: o.multiValued ?? false,
  description: o.description,
  required: o.required ?? false,
  caseExact: o.caseExact ?? false,
  mutability: o.mutability ?? "readWrite",
  returned: o.returned ?? "default",
  uniqueness: o.uniqueness ?? "none",
  ...(o.subAttributes ? { subAttributes: o.subAttributes } : {}),
});

export function schemas(baseUrl: string) {
  return [
    {
      schemas: [SCIM.schema],
      id: SCIM.user,
      name: "User",
      description: "A managed account of the organization. Keyward keeps one address per account, the userName.",
      attributes: [
        attr("userName", { required: true, uniqueness: "server", description: "The account's email address: a change must stay within the organization's verified domains and be free (the address stays verified)" }),
        attr("name", {
          type: "complex",
          description: "The person's name",
          subAttributes: [attr("formatted", { description: "The full name (the account's name)" }), attr("familyName", { description: "Family name" }), attr("givenName", { description: "Given name" })],
        }),
        attr("displayName", { description: "The name shown for the person" }),
        attr("active", { type: "boolean", description: "false suspends the account (reversible); DELETE removes it" }),
        attr("emails", {
          type: "complex",
          multiValued: true,
          description: "Answered from userName (one address per account); other addresses sent are not stored",
          subAttributes: [attr("value", { description: "The address" }), attr("type", { description: "work" }), attr("primary", { type: "boolean", description: "true" })],
        }),
      ],
      meta: { resourceType: "Schema", location: `${baseUrl}/Schemas/${SCIM.user}` },
    },
    {
      schemas: [SCIM.schema],
      id: SCIM.enterpriseUser,
      name: "EnterpriseUser",
      description: "The enterprise extension of a User: Keyward keeps department and manager (other attributes are accepted and not stored)",
      attributes: [
        attr("department", { description: "The organization's department of this name (any case; created when there is none): the person is made a member, and leaves the department the previous value named" }),
        attr("manager", {
          type: "complex",
          description: "Another User of the organization",
          subAttributes: [attr("value", { caseExact: true, description: "The manager's id (a User of this organization)" }), attr("$ref", { type: "reference", mutability: "readOnly", description: "The manager's URI" }), attr("displayName", { mutability: "readOnly", description: "The manager's displayName" })],
        }),
      ],
      meta: { resourceType: "Schema", location: `${baseUrl}/Schemas/${SCIM.enterpriseUser}` },
    },
    {
      schemas: [SCIM.schema],
      id: SCIM.group,
      name: "Group",
      description: "A department of the organization; its members are the organization's managed accounts in it",
      attributes: [
        attr("displayName", { required: true, uniqueness: "server", description: "The department's name" }),
        attr("members", {
          type: "complex",
          multiValued: true,
          description: "The Users in the department",
          subAttributes: [attr("value", { caseExact: true, mutability: "immutable", description: "The User's id" }), attr("display", { mutability: "readOnly", description: "The User's userName" }), attr("$ref", { type: "reference", mutability: "immutable", description: "The User's URI" })],
        }),
      ],
      meta: { resourceType: "Schema", location: `${baseUrl}/Schemas/${SCIM.group}` },
    },
  ];
}
