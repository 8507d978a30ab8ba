import { randomHex, randomToken } from "../../lib/crypto/index.js";

/** Client ids ("kwc_" + hex) and secrets (256 bits), minted the same way for every client, created by an admin or registered. */
export const newClientId = (): string => `kwc_${randomHex(12)}`;
export const newClientSecret = (): string => randomToken(32);
