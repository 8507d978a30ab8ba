import { execFileSync } from "node:child_process";
import { chmodSync, mkdtempSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { SK_USER_PRESENCE } from "../../src/lib/ssh/index.js";
import { addMember, newOrg } from "../factories/orgs.js";
import { createCa, grantPrincipal } from "../factories/ssh.js";
import { newUser, type TestUser } from "../factories/users.js";
import { FIXED_SK_FINGERPRINTS, FIXED_SK_KEYS, FIXED_SK_SEEDS } from "../fixtures/sk-keys.js";
import { startTestApp, type TestApp } from "../helpers/app.js";
import { buildCli, cliUser, loginWithLoopback, runCli, type CliUser } from "../helpers/cli.js";

/**
 * `keyward keys add` and `keyward ssh sign` with a FIDO2 security key. CI has no authenticator, so
 * a stand-in `ssh-keygen` first in PATH answers `-Y sign` with the software authenticator
 * (test/helpers/soft-sk-keygen.ts) holding the fixed test key, and runs the real ssh-keygen for
 * everything else (`-L` on the certificate included). The CLI itself runs unchanged.
 */
const ROOT = resolve(import.meta.dirname, "../..");
let app: TestApp;
let person: TestUser;
let owner: TestUser;
let u: CliUser;
let org: { id: string; name: string };

beforeAll(async () => {
  buildCli();
  app = await startTestApp({ RATE_LIMIT_ENABLED: "false" });
  owner = await newUser(app, { fullName: "Owner" });
  person = await newUser(app, { fullName: "Holder" });
  org = await newOrg(app, owner, `Sk ${Date.now().toString(36)}`);
  await createCa(app, org.id, owner, { key_type: "ed25519" });
  await addMember(app, org.id, owner, person, "member");
  await grantPrincipal(app, org.id, owner, person, "deploy");
  const bin = mkdtempSync(join(tmpdir(), "kw-fake-keygen-"));
  const tsx = join(ROOT, "node_modules/tsx/dist/cli.mjs");
  writeFileSync(
    join(bin, "ssh-keygen"),
    `#!/bin/sh\nif [ "$1" = "-Y" ] && [ "$2" = "sign" ]; then exec "${process.execPath}" "${tsx}" "${join(ROOT, "test/helpers/soft-sk-keygen.ts")}" "$@"; fi\nexec "${execFileSync("sh", ["-c", "command -v ssh-keygen"], { encoding: "utf8" }).trim()}" "$@"\n`,
  );
  chmodSync(join(bin, "ssh-keygen"), 0o755);
  u = cliUser(app.url, { PATH: `${bin}:${process.env.PATH}` });
  // The fixed key, where ssh-keygen -t ed25519-sk puts it: the public half, and a stand-in private file.
  writeFileSync(join(u.home, ".ssh", "id_ed25519_sk.pub"), `${FIXED_SK_KEYS.ed25519}\n`);
  writeFileSync(join(u.home, ".ssh", "id_ed25519_sk"), `SOFT-SK ed25519 ${SK_USER_PRESENCE} ${FIXED_SK_SEEDS.ed25519}\n`, { mode: 0o600 });
  const login = await loginWithLoopback(app.url, person, u);
  if (login.code !== 0) throw new Error(`login failed: ${login.stderr}`);
}, 180_000);
afterAll(() => app?.close());

describe("keyward with a security key", () => {
  it("adds the sk key with proof of possession, shows it as hardware, and signs as the policy allows", async () => {
    const added = await runCli(["keys", "add", "--json"], u);
    expect(added.code, added.stderr).toBe(0);
    expect(JSON.parse(added.stdout)).toMatchObject({
      added: true,
      proved: true,
      key: { key_type: "sk-ed25519", hardware_backed: true, sk_user_presence: true, sk_user_verification: false, fingerprint: FIXED_SK_FINGERPRINTS.ed25519, verified: true },
    });
    expect(added.stderr).toContain("touch your security key");
    const listed = await runCli(["keys", "list"], u);
    expect(listed.stdout).toMatch(/sk-ed25519 .*verified {2}hardware, proved with a touch/);

    // A department requiring a touched security key: allowed; one requiring a PIN: refused, named.
    const base = `/api/v1/organizations/${org.id}`;
    const dept = (await app.http.post(`${base}/departments`, { name: "Platform" }, { token: owner.token })).body.data.department;
    await app.http.post(`${base}/departments/${dept.id}/members`, { email: person.email }, { token: owner.token });
    await app.http.request("PUT", `${base}/departments/${dept.id}/cert-policy`, { token: owner.token, body: { require_hardware_key: true, require_touch: true } });
    const signed = await runCli(["ssh", "sign", "--key", join(u.home, ".ssh", "id_ed25519_sk"), "--json"], u);
    expect(signed.code, signed.stderr).toBe(0);
    const shown = execFileSync("ssh-keygen", ["-L", "-f", join(u.home, ".ssh", "id_ed25519_sk-cert.pub")], { encoding: "utf8" });
    expect(shown).toContain("Type: sk-ssh-ed25519-cert-v01@openssh.com user certificate");
    expect(shown).not.toContain("no-touch-required");

    await app.http.request("PUT", `${base}/departments/${dept.id}/cert-policy`, { token: owner.token, body: { require_verify: true } });
    const refused = await runCli(["ssh", "sign", "--key", join(u.home, ".ssh", "id_ed25519_sk")], u);
    expect(refused.code).not.toBe(0);
    expect(refused.stderr).toContain('The department "Platform" requires a security key that checks a PIN or biometric');
  }, 120_000);
});
