import { X509Certificate, createPrivateKey } from "node:crypto";
import { describe, expect, it } from "vitest";
import { generateSelfSignedRsa } from "../../src/lib/crypto/index.js";
import { ROLLOVER_OVERLAP_MS, pinnedCerts, rolledOver } from "../../src/modules/sso/saml-config.js";
import type { SamlConnectionConfig } from "../../schema/index.js";

/** A SAML connection's SP keys, and IdP certificate rollover from re-read metadata (issue 35). */
describe("SAML connection settings", () => {
  it("generates an SP key with a self-signed certificate that matches it", () => {
    const now = new Date("2026-11-28T00:00:00Z");
    const pair = generateSelfSignedRsa("keyward-saml-sp-signing-x", now);
    const cert = new X509Certificate(pair.certPem);
    expect(cert.subject).toBe("CN=keyward-saml-sp-signing-x");
    expect(cert.checkPrivateKey(createPrivateKey(pair.keyPem))).toBe(true);
    expect(cert.verify(cert.publicKey)).toBe(true);
    expect(new Date(cert.validTo).getUTCFullYear()).toBe(2036);
  });

  it("keeps a certificate the IdP dropped for the overlap window, then stops trusting it", () => {
    const now = new Date("2026-11-28T00:00:00Z");
    const base = { idpCertsPem: ["OLD"], previousCertsPem: [] } as unknown as SamlConnectionConfig;
    const next = rolledOver(base, ["NEW"], now);
    expect(next.idpCertsPem).toEqual(["NEW"]);
    const config = { ...base, ...next };
    expect(pinnedCerts(config, now).sort()).toEqual(["NEW", "OLD"]);
    expect(pinnedCerts(config, new Date(now.getTime() + ROLLOVER_OVERLAP_MS + 1))).toEqual(["NEW"]);
    // Listed again: current, no longer in overlap.
    expect(rolledOver(config, ["NEW", "OLD"], now)).toEqual({ idpCertsPem: ["NEW", "OLD"], previousCertsPem: [] });
  });
});
