// The one place that touches node:crypto and password hashing (ARCHITECTURE rule 8).
export * from "./random.js";
export * from "./hash.js";
export * from "./password.js";
export * from "./envelope.js";
export * from "./totp.js";
export * from "./jwk.js";
export * from "./ed25519.js";
export * from "./seal-contexts.js";
/** An unsealed private key held in memory (a CA key in the signing cache). */
export type { KeyObject } from "node:crypto";
export * from "./xmlsec.js";
export * from "./client-assertion-key.js";
export * from "./x509.js";
