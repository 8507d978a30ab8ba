import { execFileSync } from "node:child_process";
import { mkdtempSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";

export interface TestKeyPair {
  keyPem: string;
  certPem: string;
}

/** A fresh self-signed certificate and its key, made by openssl (the SP's keys, or a forger's). */
export function makeKeyPair(kind: "rsa" | "ec" = "rsa", subject = "/CN=keyward-test"): TestKeyPair {
  const dir = mkdtempSync(join(tmpdir(), "keyward-saml-key-"));
  try {
    const key = join(dir, "key.pem");
    const cert = join(dir, "cert.pem");
    const newkey = kind === "rsa" ? ["-newkey", "rsa:2048"] : ["-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:P-256"];
    execFileSync("openssl", ["req", "-x509", ...newkey, "-nodes", "-keyout", key, "-out", cert, "-days", "30", "-subj", subject], { stdio: "ignore" });
    return { keyPem: readFileSync(key, "utf8"), certPem: readFileSync(cert, "utf8") };
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

