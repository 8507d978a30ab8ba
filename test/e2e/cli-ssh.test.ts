import { execFileSync, spawnSync } from "node:child_process";
import { chmodSync, existsSync, mkdirSync, rmSync, statSync, writeFileSync } from "node:fs";
import { hostname } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startTestApp, type TestApp } from "../helpers/app.js";
import { buildCli, cliUser, loginWithLoopback, plain, runCli, startCliInPty, type CliUser } from "../helpers/cli.js";
import { startSshd } from "../helpers/sshd.js";
import { addMember, newOrg } from "../factories/orgs.js";
import { createCa, grantPrincipal, keysDir, makeKey } from "../factories/ssh.js";
import { newUser, type TestUser } from "../factories/users.js";

/**
 * The built `keyward` client signing SSH certificates: keys registered with proof of possession,
 * a certificate for the only organization that real sshd accepts, and the choice among several
 * organizations (a numbered prompt on a terminal, exit code 4 naming --org-id without one).
 */
let app: TestApp;
let person: TestUser;
let owner: TestUser;
let u: CliUser;
let orgA: { id: string; name: string };
let orgB: { id: string; name: string };

async function orgWithCa(name: string, principal: string) {
  const org = await newOrg(app, owner, name);
  await createCa(app, org.id, owner, { key_type: "ed25519" });
  await addMember(app, org.id, owner, person, "member");
  await grantPrincipal(app, org.id, owner, person, principal);
  return org;
}

const keygen = (path: string) => execFileSync("ssh-keygen", ["-q", "-t", "ed25519", "-N", "", "-C", "cli-test", "-f", path]);
const json = (s: string) => JSON.parse(s);

beforeAll(async () => {
  buildCli();
  app = await startTestApp({ RATE_LIMIT_ENABLED: "false" });
  owner = await newUser(app, { fullName: "Owner" });
  person = await newUser(app, { fullName: "Signer" });
  orgA = await orgWithCa(`Acme ${Date.now().toString(36)}`, "root");
  u = cliUser(app.url);
  keygen(join(u.home, ".ssh", "id_ed25519"));
  const login = await loginWithLoopback(app.url, person, u);
  if (login.code !== 0) throw new Error(`login failed: ${login.stderr}`);
}, 120_000);
afterAll(() => app?.close());

describe("keyward keys", () => {
  it("adds a key by proving possession with ssh-keygen -Y sign, lists it, and removes it", async () => {
    const other = join(u.home, ".ssh", "work_key");
    keygen(other);
    const added = await runCli(["keys", "add", other, "--description", "work laptop", "--json"], u);
    expect(added.code, added.stderr).toBe(0);
    const result = json(added.stdout);
    expect(result).toMatchObject({ added: true, proved: true, key: { verified: true, description: "work laptop" } });

    const again = await runCli(["keys", "add", `${other}.pub`, "--json"], u);
    expect(json(again.stdout)).toMatchObject({ added: false, proved: false, key: { id: result.key.id } });

    const listed = json((await runCli(["keys", "list", "--json"], u)).stdout);
    expect(listed.keys.map((k: { id: string }) => k.id)).toContain(result.key.id);
    // The server agrees: the key is verified (the signature was checked there).
    const server = await app.http.get(`/api/v1/ssh/keys/${result.key.id}`, { token: person.token });
    expect(server.body.data.verified).toBe(true);

    const removed = await runCli(["keys", "rm", result.key.id], u);
    expect(removed.code, removed.stderr).toBe(0);
    expect((await app.http.get(`/api/v1/ssh/keys/${result.key.id}`, { token: person.token })).status).toBe(404);
  }, 60_000);

  it("names a key by its own comment, and only a key without one after this host", async () => {
    const commented = join(u.home, ".ssh", "laptop_key");
    execFileSync("ssh-keygen", ["-q", "-t", "ed25519", "-N", "", "-C", "ann@laptop 2026", "-f", commented]);
    const bare = join(u.home, ".ssh", "bare_key");
    execFileSync("ssh-keygen", ["-q", "-t", "ed25519", "-N", "", "-C", "", "-f", bare]);
    const first = json((await runCli(["keys", "add", commented, "--json"], u)).stdout);
    expect(first.key.description).toBe("ann@laptop 2026");
    const second = json((await runCli(["keys", "add", bare, "--json"], u)).stdout);
    expect(second.key.description).toBe(`keyward on ${hostname()}`);
    // What the server keeps is what `keys list` shows.
    const listed = (await runCli(["keys", "list"], u)).stdout;
    expect(listed).toContain("ann@laptop 2026");
    for (const k of [first.key.id, second.key.id]) expect((await runCli(["keys", "rm", k], u)).code).toBe(0);
  }, 60_000);
});

describe("keyward ssh sign", () => {
  it("registers the default key, signs for the only organization, and real sshd accepts the certificate", async () => {
    const out = await runCli(["ssh", "sign"], u);
    expect(out.code, out.stderr).toBe(0);
    const certPath = join(u.home, ".ssh", "id_ed25519-cert.pub");
    expect(existsSync(certPath)).toBe(true);
    expect(out.stdout).toContain(`Certificate from ${orgA.name} written to ${certPath}`);
    expect(out.stdout).toMatch(/principals: root\b/);
    expect(out.stdout).toMatch(/valid until .* \(in \d+[hm]/);
    expect(execFileSync("ssh-keygen", ["-L", "-f", certPath], { encoding: "utf8" })).toMatch(/Principals:\s+root\s/);

    const status = await runCli(["ssh", "status", "--json"], u);
    expect(status.code, status.stderr).toBe(0);
    expect(json(status.stdout).certificates).toEqual([expect.objectContaining({ path: certPath, state: "valid", principals: ["root"] })]);

    const hostKey = makeKey("ed25519");
    chmodSync(hostKey.path, 0o600);
    const krl = join(keysDir, "cli-org.krl");
    writeFileSync(krl, Buffer.from(await (await fetch(`${app.url}/api/v1/organizations/${orgA.id}/ssh/krl`)).arrayBuffer()));
    const caKeys = (await app.http.get(`/api/v1/organizations/${orgA.id}/ssh/ca-keys`, { token: owner.token })).body.data.trusted_user_ca_keys;
    const sshd = await startSshd({ trustedUserCaKeys: caKeys, hostKeyPath: hostKey.path, krlPath: krl });
    try {
      const login = sshd.login("root", join(u.home, ".ssh", "id_ed25519"), certPath);
      expect(login.status, `${login.stderr}\n${sshd.log()}`).toBe(0);
    } finally {
      sshd.stop();
    }
  }, 60_000);

  it("with several organizations: exit 4 naming --org-id without a terminal, a numbered choice on one", async () => {
    orgB = await orgWithCa(`Globex ${Date.now().toString(36)}`, "deploy");

    const refused = await runCli(["ssh", "sign"], u);
    expect(refused.code).toBe(4);
    const line = refused.stderr.trim();
    expect(line.split("\n")).toHaveLength(1);
    expect(line).toContain("--org-id");
    for (const o of [orgA, orgB]) expect(line).toContain(`${o.id} (${o.name})`);
    const asJson = await runCli(["ssh", "sign", "--json"], u);
    expect(asJson.code).toBe(4);
    expect(json(asJson.stdout).error.details.organizations).toEqual(expect.arrayContaining([{ id: orgB.id, name: orgB.name }]));

    const listed = json((await runCli(["ssh", "sign", "--list-orgs", "--json"], u)).stdout);
    expect(listed.organizations.map((o: { id: string }) => o.id).sort()).toEqual([orgA.id, orgB.id].sort());

    const tty = startCliInPty(["ssh", "sign"], u);
    await tty.waitFor(/Sign with which organization\?/);
    const number = (await tty.waitFor(new RegExp(`(\\d+)\\) ${orgB.name}`)))[1]!;
    tty.write(`${number}\r`);
    const done = await tty.done;
    const screen = plain(done.stdout);
    expect(done.code, screen).toBe(0);
    expect(screen).toContain(`Certificate from ${orgB.name}`);
    expect(screen).toMatch(/principals: deploy\b/);
    const listing = spawnSync("ssh-keygen", ["-L", "-f", join(u.home, ".ssh", "id_ed25519-cert.pub")], { encoding: "utf8" }).stdout;
    expect(listing).toMatch(/Principals:\s+deploy\s/);

    const named = await runCli(["ssh", "sign", "--org-id", orgA.id, "--json"], u);
    expect(named.code, named.stderr).toBe(0);
    expect(json(named.stdout)).toMatchObject({ organization_id: orgA.id, principals: ["root"] });
    // A refusal by the organization's policy is exit 1 with the server's own words, on one line.
    const tooLong = await runCli(["ssh", "sign", "--org-id", orgA.id, "--hours", "2"], u);
    expect(tooLong.code).toBe(1);
    expect(tooLong.stderr.trim()).toBe("error: Your department policy does not let you choose the certificate lifetime");
  }, 60_000);

  it("ssh status finds the certificate of a key outside ~/.ssh that ssh sign wrote, and forgets it once deleted", async () => {
    const elsewhere = join(u.home, "work", "deploy_key");
    mkdirSync(join(u.home, "work"));
    keygen(elsewhere);
    const signed = await runCli(["ssh", "sign", "--org-id", orgA.id, "--key", elsewhere, "--json"], u);
    expect(signed.code, signed.stderr).toBe(0);
    expect(json(signed.stdout).certificate_path).toBe(`${elsewhere}-cert.pub`);

    const status = await runCli(["ssh", "status", "--json"], u);
    expect(status.code, status.stderr).toBe(0);
    const paths = json(status.stdout).certificates.map((c: { path: string }) => c.path);
    expect(paths).toEqual(expect.arrayContaining([join(u.home, ".ssh", "id_ed25519-cert.pub"), `${elsewhere}-cert.pub`]));
    expect(paths).toHaveLength(2);
    // The record holds paths only, readable by its owner alone.
    expect(statSync(join(u.configDir, "certificates.json")).mode & 0o777).toBe(0o600);

    rmSync(`${elsewhere}-cert.pub`);
    const after = await runCli(["ssh", "status", "--json"], u);
    expect(after.code, after.stderr).toBe(0);
    expect(json(after.stdout).certificates.map((c: { path: string }) => c.path)).toEqual([join(u.home, ".ssh", "id_ed25519-cert.pub")]);
  }, 60_000);

  it("lists organizations with the ids --org-id takes", async () => {
    const out = await runCli(["orgs"], u);
    expect(out.code, out.stderr).toBe(0);
    for (const o of [orgA, orgB]) expect(out.stdout).toContain(o.id);
  });
});
