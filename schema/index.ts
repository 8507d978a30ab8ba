export * from "./users.js";
export * from "./audit.js";
export * from "./email.js";
