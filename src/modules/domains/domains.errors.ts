import { AppError } from "../../lib/errors.js";
import type { DomainProblem } from "../../lib/domain-names.js";

export const DomainErrors = {
  notFound: () => new AppError("DOMAIN_NOT_FOUND", 404, "Domain not found"),
  exists: () => new AppError("DOMAIN_EXISTS", 409, "The organization already has this domain: verify it or remove it"),
  alreadyVerified: () => new AppError("DOMAIN_ALREADY_VERIFIED", 409, "This domain is verified by another organization: a domain belongs to one organization at most"),
  notClaimable: (problem: DomainProblem, message: string) => new AppError("DOMAIN_NOT_CLAIMABLE", 400, message, { reason: problem }),
};
