// The one SSH adapter: sshpk parses user keys; node:crypto signs; wire formats are encoded here.
export * from "./keys.js";
export * from "./certificate.js";
export * from "./sshsig.js";
export * from "./krl.js";
export * from "./ca-keys.js";
export * from "./signature.js";
export * from "./sk.js";
