export * from "./users.js";
export * from "./audit.js";
export * from "./email.js";
export * from "./orgs.js";
export * from "./api-keys.js";
export * from "./ssh.js";
export * from "./contact.js";
export * from "./mfa.js";
