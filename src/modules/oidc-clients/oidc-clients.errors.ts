import { AppError } from "../../lib/errors.js";

export const ClientErrors = {
  notFound: () => new AppError("CLIENT_NOT_FOUND", 404, "Client not found"),
  notConfidential: () => new AppError("BAD_REQUEST", 400, "A public client has no secret to rotate"),
  consentNotFound: () => new AppError("NOT_FOUND", 404, "No consent for that client"),
};
