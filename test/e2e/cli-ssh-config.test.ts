import { execFileSync, spawn, spawnSync } from "node:child_process";
import { chmodSync, existsSync, readFileSync, rmSync, statSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startTestApp, type TestApp } from "../helpers/app.js";
import { buildCli, cliUser, loginWithLoopback, runCli, type CliUser } from "../helpers/cli.js";
import { startSshd } from "../helpers/sshd.js";
import { addMember, newOrg } from "../factories/orgs.js";
import { createCa, grantPrincipal, keysDir, makeKey } from "../factories/ssh.js";
import { newUser, type TestUser } from "../factories/users.js";

/**
 * `keyward ssh config` with real OpenSSH: the generated Include file makes a plain `ssh host`
 * (StrictHostKeyChecking yes) trust the host through the organization's host CA and its host
 * patterns, and its `Match exec` (`keyward ssh ensure`) signs the missing user certificate, and
 * renews an expired one, before ssh reads it. The files are written whole, atomically, the same
 * bytes each time, and `--install` adds only its own marked block to ~/.ssh/config.
 */
let app: TestApp;
let owner: TestUser;
let person: TestUser;
let org: { id: string; name: string; slug: string };
let u: CliUser;
let sshd: Awaited<ReturnType<typeof startSshd>>;
let userConfig: string;

const HOST = "box.kw.test";
const FOREIGN = (port: number) =>
  [
    "# my own settings, keyward must leave them alone",
    `Host ${HOST}`,
    "  HostName 127.0.0.1",
    `  Port ${port}`,
    // No DNS here: the name the certificate and the patterns use is kept for host-key checks.
    `  HostKeyAlias ${HOST}`,
    "  User root",
    "",
  ].join("\n");

const json = (s: string) => JSON.parse(s);
const certPath = () => join(u.home, ".ssh", "keyward", `${org.id}-cert.pub`);

/**
 * Plain ssh with the person's config (-F: ssh reads ~/.ssh/config from the passwd home, not $HOME).
 * Asynchronous: the server runs in this process and must answer the `keyward ssh ensure` ssh runs.
 */
function ssh(host: string): Promise<{ status: number | null; stdout: string; stderr: string }> {
  const args = ["-F", userConfig, "-o", "BatchMode=yes", "-o", "StrictHostKeyChecking=yes", "-o", "GlobalKnownHostsFile=/dev/null", "-o", "IdentitiesOnly=yes", "-o", "ConnectTimeout=10", host, "echo signed-in"];
  return new Promise((done) => {
    const child = spawn("ssh", args, { env: u.env, stdio: ["ignore", "pipe", "pipe"] });
    let stdout = "";
    let stderr = "";
    child.stdout.on("data", (d) => (stdout += d));
    child.stderr.on("data", (d) => (stderr += d));
    const timer = setTimeout(() => child.kill("SIGKILL"), 60_000);
    child.once("close", (status) => {
      clearTimeout(timer);
      done({ status, stdout, stderr });
    });
  });
}

const serial = (path: string) => /Serial: (\d+)/.exec(execFileSync("ssh-keygen", ["-L", "-f", path], { encoding: "utf8" }))![1];

beforeAll(async () => {
  buildCli();
  app = await startTestApp({ RATE_LIMIT_ENABLED: "false" });
  owner = await newUser(app, { fullName: "Owner" });
  person = await newUser(app, { fullName: "Person" });
  org = await newOrg(app, owner, `Acme ${Date.now().toString(36)}`);
  const userCa = await createCa(app, org.id, owner, { key_type: "ed25519" });
  const hostCa = await createCa(app, org.id, owner, { name: "Hosts", ca_type: "host" });
  const patched = await app.http.patch(`/api/v1/organizations/${org.id}/cas/${hostCa.id}`, { host_patterns: ["*.kw.test", "10.9.8.*"] }, { token: owner.token });
  expect(patched.status, patched.text).toBe(200);
  await addMember(app, org.id, owner, person, "member");
  await grantPrincipal(app, org.id, owner, person, "root");

  // The server: a host key whose certificate the organization's host CA signed for its name.
  const hostKey = makeKey("ed25519");
  chmodSync(hostKey.path, 0o600);
  const signed = await app.http.post("/api/v1/ssh/sign/host", { host_public_key: hostKey.pub, principals: [HOST], org_id: org.id }, { token: owner.token });
  expect(signed.status, signed.text).toBe(201);
  writeFileSync(`${hostKey.path}-cert.pub`, `${signed.body.data.certificate}\n`);
  const krl = join(keysDir, "ssh-config.krl");
  writeFileSync(krl, Buffer.from(await (await fetch(`${app.url}/api/v1/organizations/${org.id}/ssh/krl`)).arrayBuffer()));
  sshd = await startSshd({ trustedUserCaKeys: `${userCa.public_key}\n`, hostKeyPath: hostKey.path, hostCertPath: `${hostKey.path}-cert.pub`, krlPath: krl });

  u = cliUser(app.url);
  execFileSync("ssh-keygen", ["-q", "-t", "ed25519", "-N", "", "-C", "me", "-f", join(u.home, ".ssh", "id_ed25519")]);
  userConfig = join(u.home, ".ssh", "config");
  writeFileSync(userConfig, FOREIGN(sshd.port), { mode: 0o644 });
  const login = await loginWithLoopback(app.url, person, u);
  if (login.code !== 0) throw new Error(`login failed: ${login.stderr}`);
}, 120_000);
afterAll(async () => {
  sshd?.stop();
  await app?.close();
});

describe("keyward ssh config", () => {
  it("prints the files without writing anything", async () => {
    const out = await runCli(["ssh", "config", "--print", "--json"], u);
    expect(out.code, out.stderr).toBe(0);
    const printed = json(out.stdout);
    expect(printed.config).toContain(`Match host *.kw.test,10.9.8.* exec "`);
    expect(printed.config).toContain(`ssh ensure --server ${app.url} --org-id ${org.id} --key ${join(u.home, ".ssh", "id_ed25519")} --quiet"`);
    expect(printed.known_hosts).toMatch(/^@cert-authority \*\.kw\.test,\[\*\.kw\.test\]:\*,10\.9\.8\.\*,\[10\.9\.8\.\*\]:\* ssh-ed25519 AAAA\S+ keyward-host-ca-/m);
    expect(printed.include_line).toBe(`Include ${join(u.home, ".ssh", "keyward", "config")}`);
    expect(existsSync(join(u.home, ".ssh", "keyward"))).toBe(false);
  });

  it("installs its Include above the person's own lines; plain ssh then signs the missing certificate and trusts the host through the CA", async () => {
    const out = await runCli(["ssh", "config", "--install"], u);
    expect(out.code, out.stderr).toBe(0);
    expect(out.stdout).toContain(`Wrote ${join(u.home, ".ssh", "keyward", "config")}`);
    const dir = join(u.home, ".ssh", "keyward");
    expect(statSync(dir).mode & 0o777).toBe(0o700);
    for (const f of ["config", "known_hosts"]) expect(statSync(join(dir, f)).mode & 0o777, f).toBe(0o600);
    const mine = readFileSync(userConfig, "utf8");
    expect(mine.split("\n").slice(0, 3)).toEqual([expect.stringMatching(/^# >>> keyward ssh config/), `Include ${join(dir, "config")}`, "# <<< keyward ssh config <<<"]);
    // The person's lines follow, byte for byte; the mode they chose stays.
    expect(mine.endsWith(`\n${FOREIGN(sshd.port)}`)).toBe(true);
    expect(statSync(userConfig).mode & 0o777).toBe(0o644);

    expect(existsSync(certPath())).toBe(false);
    const first = await ssh(HOST);
    expect(first.status, `${first.stderr}\n${sshd.log()}`).toBe(0);
    expect(first.stdout.trim()).toBe("signed-in");
    expect(existsSync(certPath())).toBe(true);
    expect(await sshd.waitForLog(new RegExp(`Accepted certificate ID "${person.email.replace(/[.+]/g, "\\$&")} \\[org:`))).toBe(true);

    // A host outside the patterns is left alone: no certificate of ours, no keyward run.
    const other = spawnSync("ssh", ["-G", "-F", userConfig, "github.com"], { encoding: "utf8", env: u.env });
    expect(other.status).toBe(0);
    expect(other.stdout).not.toContain("keyward");
  }, 90_000);

  it("writes the same bytes when run again, and --install twice leaves one block", async () => {
    const dir = join(u.home, ".ssh", "keyward");
    const before = ["config", "known_hosts"].map((f) => readFileSync(join(dir, f)));
    const userBefore = readFileSync(userConfig);
    const again = await runCli(["ssh", "config", "--install", "--json"], u);
    expect(again.code, again.stderr).toBe(0);
    expect(json(again.stdout).changed).toEqual({ config: false, known_hosts: false });
    expect(["config", "known_hosts"].map((f) => readFileSync(join(dir, f)))).toEqual(before);
    expect(readFileSync(userConfig)).toEqual(userBefore);
    // Without --install it does not touch ~/.ssh/config, and says it is already included.
    const plain = await runCli(["ssh", "config"], u);
    expect(plain.stdout).toContain(`${userConfig} includes it`);
    expect(readFileSync(userConfig)).toEqual(userBefore);
  }, 60_000);

  it("renews an expired certificate on the next ssh", async () => {
    // A certificate signed three hours ago (the server's clock set back) has run out by now.
    rmSync(certPath());
    app.clock.advance(-3 * 3600);
    try {
      const old = await runCli(["ssh", "ensure", "--org-id", org.id, "--json"], u);
      expect(old.code, old.stderr).toBe(0);
      expect(json(old.stdout).renewed).toBe(true);
    } finally {
      app.clock.reset();
    }
    const expiredSerial = serial(certPath());
    const status = json((await runCli(["ssh", "status", certPath(), "--json"], u)).stdout);
    expect(status.certificates[0].state).toBe("expired");

    const next = await ssh(HOST);
    expect(next.status, `${next.stderr}\n${sshd.log()}`).toBe(0);
    expect(serial(certPath())).not.toBe(expiredSerial);
    expect(json((await runCli(["ssh", "status", certPath(), "--json"], u)).stdout).certificates[0].state).toBe("valid");

    // Valid now: ensure leaves it as it is (no new serial).
    const kept = serial(certPath());
    const quiet = await runCli(["ssh", "ensure", "--org-id", org.id, "--quiet"], u);
    expect(quiet).toMatchObject({ code: 0, stdout: "", stderr: "" });
    expect(serial(certPath())).toBe(kept);
  }, 90_000);

  it("signs once for 8 parallel connections, and each finds a whole certificate", async () => {
    const issued = async () => (await app.http.get("/api/v1/ssh/certificates?per_page=100", { token: person.token })).body.data.certificates.length as number;
    const before = await issued();
    rmSync(certPath());
    const runs = await Promise.all(Array.from({ length: 8 }, () => runCli(["ssh", "ensure", "--org-id", org.id, "--json"], u)));
    for (const r of runs) expect(r.code, r.stderr).toBe(0);
    expect(runs.filter((r) => json(r.stdout).renewed)).toHaveLength(1);
    expect(await issued()).toBe(before + 1);
    expect(existsSync(`${certPath()}.lock`)).toBe(false);
    const logins = await Promise.all([ssh(HOST), ssh(HOST), ssh(HOST)]);
    for (const l of logins) expect(l.status, l.stderr).toBe(0);
  }, 90_000);

  it("ensure exits 0 with one line on stderr when it cannot sign, so ssh goes on", async () => {
    const stranger = cliUser(app.url);
    execFileSync("ssh-keygen", ["-q", "-t", "ed25519", "-N", "", "-f", join(stranger.home, ".ssh", "id_ed25519")]);
    const out = await runCli(["ssh", "ensure", "--org-id", org.id, "--quiet"], stranger);
    expect(out.code).toBe(0);
    expect(out.stderr.trim().split("\n")).toHaveLength(1);
    expect(out.stderr).toMatch(/keyward: no new certificate for .*keyward login/);
  });

  it("with several organizations: exit 4 naming --org-id; --all skips one without host patterns, with a warning", async () => {
    const other = await newOrg(app, owner, `Globex ${Date.now().toString(36)}`);
    await createCa(app, other.id, owner, { key_type: "ed25519" });
    await addMember(app, other.id, owner, person, "member");

    const refused = await runCli(["ssh", "config", "--print"], u);
    expect(refused.code).toBe(4);
    expect(refused.stderr).toContain("--org-id");
    expect(refused.stderr).toContain(`${other.id} (${other.name})`);

    const named = await runCli(["ssh", "config", "--print", "--org-id", other.id], u);
    expect(named.code).toBe(1);
    expect(named.stderr).toContain("no host CA");

    const all = await runCli(["ssh", "config", "--print", "--all", "--json"], u);
    expect(all.code, all.stderr).toBe(0);
    expect(all.stderr).toContain(`warning: ${other.name}: it has no host CA`);
    expect(json(all.stdout).organizations.map((o: { id: string }) => o.id)).toEqual([org.id]);
    // A member sees only their own organizations.
    const list = (await app.http.get("/api/v1/ssh/client-config", { token: person.token })).body.data.organizations;
    expect(list.map((o: { id: string }) => o.id).sort()).toEqual([org.id, other.id].sort());
  }, 60_000);
});
