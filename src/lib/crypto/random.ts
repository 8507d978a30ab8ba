import { randomBytes, randomInt, randomUUID } from "node:crypto";

/** A URL-safe random string carrying `bytes` bytes of entropy (32 = 256 bits). */
export const randomToken = (bytes = 32): string => randomBytes(bytes).toString("base64url");

export const randomHex = (bytes: number): string => randomBytes(bytes).toString("hex");

export const uuid = (): string => randomUUID();

/** Uniform integer in [min, max). */
export const randomIntBetween = (min: number, max: number): number => randomInt(min, max);
