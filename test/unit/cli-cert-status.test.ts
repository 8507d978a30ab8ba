import { execFileSync } from "node:child_process";
import { mkdtempSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { certStatus, parseCertificateListing } from "../../src/cli/cert-status.js";
import { listCertificate } from "../../src/cli/ssh-keygen.js";
import { formatDuration } from "../../src/cli/time.js";

const listing = (valid: string, principals = "\n                root\n                deploy") => `/home/u/.ssh/id_ed25519-cert.pub:
        Type: ssh-ed25519-cert-v01@openssh.com user certificate
        Public key: ED25519-CERT SHA256:9rYqTO5pAw0b3/ibP80RQHBc8SVPOQrL7R4mOmqy98M
        Signing CA: ED25519 SHA256:coDRN0vb9SVu+c+m6/WmQMxkSSxtwOdSVXrZLbwPlxM (using ssh-ed25519)
        Key ID: "ann@example.com [org:acme]"
        Serial: 42
        Valid: ${valid}
        Principals: ${principals}
        Critical Options: (none)
        Extensions: 
                permit-pty
`;

describe("certificate status", () => {
  it("reads key id, serial, principals and both validity bounds (as UTC)", () => {
    const info = parseCertificateListing(listing("from 2030-01-01T10:00:00 to 2030-01-01T18:00:00"));
    expect(info).toMatchObject({ keyId: "ann@example.com [org:acme]", serial: "42", principals: ["root", "deploy"] });
    expect(info.validAfter!.toISOString()).toBe("2030-01-01T10:00:00.000Z");
    expect(info.validBefore!.toISOString()).toBe("2030-01-01T18:00:00.000Z");
    expect(info.type).toContain("user certificate");
  });

  it("understands every validity OpenSSH prints and no principals", () => {
    expect(parseCertificateListing(listing("forever", "(none)"))).toMatchObject({ validAfter: null, validBefore: null, principals: [] });
    expect(parseCertificateListing(listing("before 2030-01-01T00:00:00")).validAfter).toBeNull();
    expect(parseCertificateListing(listing("after 2030-01-01T00:00:00")).validBefore).toBeNull();
    expect(parseCertificateListing(listing("from 2030-01-01T00:00:00 to forever")).validBefore).toBeNull();
  });

  it("says valid with time left, expired, or not yet valid", () => {
    const info = parseCertificateListing(listing("from 2030-01-01T10:00:00 to 2030-01-01T18:00:00"));
    expect(certStatus(info, new Date("2030-01-01T12:30:00Z"))).toEqual({ state: "valid", remainingMs: 5.5 * 3_600_000, summary: "valid for 5h 30m" });
    expect(certStatus(info, new Date("2030-01-02T18:00:00Z"))).toMatchObject({ state: "expired", summary: "expired 1d ago" });
    expect(certStatus(info, new Date("2030-01-01T09:00:00Z"))).toMatchObject({ state: "not yet valid" });
    expect(certStatus(parseCertificateListing(listing("forever")), new Date())).toMatchObject({ state: "valid", remainingMs: null });
  });

  it("parses what the real ssh-keygen prints for a fresh certificate", () => {
    const dir = mkdtempSync(join(tmpdir(), "kw-cli-cert-"));
    execFileSync("ssh-keygen", ["-q", "-t", "ed25519", "-N", "", "-f", join(dir, "ca")]);
    execFileSync("ssh-keygen", ["-q", "-t", "ed25519", "-N", "", "-f", join(dir, "id")]);
    execFileSync("ssh-keygen", ["-q", "-s", join(dir, "ca"), "-I", "bob [org:x]", "-n", "root,deploy", "-V", "-5m:+8h", join(dir, "id.pub")]);
    const info = parseCertificateListing(listCertificate(join(dir, "id-cert.pub")));
    expect(info.principals).toEqual(["root", "deploy"]);
    expect(info.keyId).toBe("bob [org:x]");
    const status = certStatus(info);
    expect(status.state).toBe("valid");
    // Times are read as UTC (ssh-keygen runs with TZ=UTC): about 8 hours left, whatever the local zone.
    expect(Math.abs(status.remainingMs! - 8 * 3_600_000)).toBeLessThan(120_000);
  });

  it("formats durations with their two largest units", () => {
    expect(formatDuration(0)).toBe("0s");
    expect(formatDuration(45_000)).toBe("45s");
    expect(formatDuration(3_660_000)).toBe("1h 1m");
    expect(formatDuration(3 * 86_400_000 + 4 * 3_600_000 + 5000)).toBe("3d 4h");
    expect(formatDuration(2 * 3_600_000)).toBe("2h");
  });
});
