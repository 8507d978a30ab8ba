import { spawn, spawnSync, type ChildProcess } from "node:child_process";
import { chmodSync, existsSync, mkdirSync, mkdtempSync, readFileSync, writeFileSync } from "node:fs";
import { createServer } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startTestApp, type TestApp } from "../helpers/app.js";
import { buildCli, CLI } from "../helpers/cli.js";
import { orgWithRoles } from "../factories/orgs.js";
import { addVerifiedKey, createCa, grantPrincipal, keysDir, makeKey, type LocalKey } from "../factories/ssh.js";
import type { TestUser } from "../factories/users.js";

/**
 * Per-host AuthorizedPrincipalsFile against a real sshd on loopback: an admin maps principals to a
 * login on the hosts a pattern matches; `keyward host enroll` writes `keyward_principals/<login>`
 * and the snippet's `AuthorizedPrincipalsFile …/%u`; sshd then refuses a certificate without a
 * mapped principal and accepts one with it; a changed mapping reaches the host with
 * `keyward host renew` (no sshd restart: sshd reads the file per connection); a removed one takes
 * its file and the snippet line away.
 */
let app: TestApp;
let orgId: string;
let owner: TestUser;
let member: TestUser;
let key: LocalKey;
let keyId: string;

beforeAll(async () => {
  buildCli();
  app = await startTestApp({ RATE_LIMIT_ENABLED: "false" });
  const a = await orgWithRoles(app);
  ({ owner, member } = a);
  orgId = a.org.id;
  await createCa(app, orgId, owner, { name: "Users" });
  await createCa(app, orgId, owner, { name: "Hosts", ca_type: "host" });
  await grantPrincipal(app, orgId, owner, member, "root");
  await grantPrincipal(app, orgId, owner, member, "ops");
  key = makeKey("ed25519");
  keyId = (await addVerifiedKey(app, member, key)).id;
});
afterAll(() => app?.close());

function keyward(args: string[]): Promise<{ code: number | null; stdout: string; stderr: string }> {
  return new Promise((resolve) => {
    const child = spawn(process.execPath, [CLI, ...args], { env: { PATH: process.env.PATH, HOME: tmpdir(), NO_COLOR: "1" }, stdio: ["ignore", "pipe", "pipe"] });
    let stdout = "";
    let stderr = "";
    child.stdout.on("data", (d: Buffer) => (stdout += d.toString()));
    child.stderr.on("data", (d: Buffer) => (stderr += d.toString()));
    child.on("close", (code) => resolve({ code, stdout, stderr }));
  });
}

const freePort = () =>
  new Promise<number>((resolve) => {
    const s = createServer().listen(0, "127.0.0.1", () => {
      const port = (s.address() as { port: number }).port;
      s.close(() => resolve(port));
    });
  });

const P = () => `/api/v1/organizations/${orgId}/ssh/host-principals`;
const setMap = (body: Record<string, unknown>, by = owner) => app.http.put(P(), body, { token: by.token });

let certSeq = 0;
async function userCert(principals: string[]): Promise<string> {
  const res = await app.http.post("/api/v1/ssh/sign", { key_id: keyId, principals, org_id: orgId }, { token: member.token });
  expect(res.status, res.text).toBe(201);
  const path = join(keysDir, `host-principals-${certSeq++}-cert.pub`);
  writeFileSync(path, res.body.data.certificate + "\n");
  return path;
}

describe("per-host AuthorizedPrincipalsFile with a real sshd", () => {
  it("is written by enroll, enforced by sshd, refreshed by renew and removed with its mapping", async () => {
    expect((await setMap({ host_pattern: "*.example.com", login: "root", principals: ["ops"] })).status).toBe(200);
    // Another pattern that does not match this host adds nothing.
    expect((await setMap({ host_pattern: "db*.internal", login: "root", principals: ["dba"] })).status).toBe(200);

    const dir = mkdtempSync(join(tmpdir(), "kw-etc-ssh-"));
    spawnSync("ssh-keygen", ["-q", "-t", "ed25519", "-N", "", "-C", "root@host", "-f", join(dir, "ssh_host_ed25519_key")]);
    chmodSync(join(dir, "ssh_host_ed25519_key"), 0o600);
    const t = await app.http.post(`/api/v1/organizations/${orgId}/ssh/host-enrollment-tokens`, { names: ["srv1.example.com", "127.0.0.1"] }, { token: owner.token });
    const enrolled = await keyward(["host", "enroll", "--server", app.url, "--token", t.body.data.enrollment_token.token, "--dir", dir, "--sshd-config-dir", join(dir, "sshd_config.d"), "--json"]);
    expect(enrolled.code, enrolled.stderr).toBe(0);
    const principalsFile = join(dir, "keyward_principals", "root");
    expect(readFileSync(principalsFile, "utf8")).toBe("ops\n");
    const snippet = readFileSync(join(dir, "sshd_config.d", "50-keyward.conf"), "utf8");
    expect(snippet).toContain(`AuthorizedPrincipalsFile ${join(dir, "keyward_principals")}/%u`);

    mkdirSync("/run/sshd", { recursive: true });
    const port = await freePort();
    const config = join(dir, "sshd_config");
    writeFileSync(
      config,
      [`Port ${port}`, "ListenAddress 127.0.0.1", `HostKey ${join(dir, "ssh_host_ed25519_key")}`, `Include ${join(dir, "sshd_config.d", "*.conf")}`, "AuthorizedKeysFile none", "PasswordAuthentication no", "KbdInteractiveAuthentication no", "UsePAM no", "PermitRootLogin prohibit-password", "StrictModes no", `PidFile ${join(dir, "sshd.pid")}`, "LogLevel VERBOSE", ""].join("\n"),
    );
    const log: string[] = [];
    const proc: ChildProcess = spawn("/usr/sbin/sshd", ["-D", "-e", "-f", config], { stdio: ["ignore", "ignore", "pipe"] });
    proc.stderr!.on("data", (d: Buffer) => log.push(d.toString()));
    try {
      for (let i = 0; i < 100 && !log.join("").includes("Server listening"); i++) await new Promise((r) => setTimeout(r, 100));
      expect(log.join("")).toContain("Server listening");
      const knownHosts = (await app.http.get(`/api/v1/organizations/${orgId}/ssh/ca-keys`, { token: member.token })).body.data.known_hosts as string;
      const kh = join(dir, "known_hosts");
      writeFileSync(kh, knownHosts);
      // Asynchronously: the server under test runs in this process, and a blocked event loop resets its keep-alive connections.
      const login = (cert: string) =>
        new Promise<{ status: number | null; stderr: string }>((resolve) => {
          const child = spawn("ssh", ["-p", String(port), "-i", key.path, "-o", `CertificateFile=${cert}`, "-o", "IdentitiesOnly=yes", "-o", "BatchMode=yes", "-o", `UserKnownHostsFile=${kh}`, "-o", "StrictHostKeyChecking=yes", "-o", "ConnectTimeout=10", "root@127.0.0.1", "true"], { stdio: ["ignore", "ignore", "pipe"] });
          let stderr = "";
          child.stderr.on("data", (d: Buffer) => (stderr += d.toString()));
          child.on("close", (status) => resolve({ status, stderr }));
        });

      const rootOnly = await userCert(["root"]);
      const opsOnly = await userCert(["ops"]);
      // "root" would log in as root without the file (sshd's default); the mapping says only "ops" may.
      expect((await login(rootOnly)).status, log.join("")).not.toBe(0);
      const ok = await login(opsOnly);
      expect(ok.status, `${ok.stderr}\n${log.join("")}`).toBe(0);

      // The mapping changes: renew brings it, sshd reads it on the next connection.
      expect((await setMap({ host_pattern: "*.example.com", login: "root", principals: ["root"] })).status).toBe(200);
      const renewed = await keyward(["host", "renew", "--dir", dir, "--sshd-config-dir", join(dir, "sshd_config.d"), "--json"]);
      expect(renewed.code, renewed.stderr).toBe(0);
      expect(readFileSync(principalsFile, "utf8")).toBe("root\n");
      expect((await login(opsOnly)).status).not.toBe(0);
      expect((await login(rootOnly)).status, log.join("")).toBe(0);
    } finally {
      proc.kill("SIGTERM");
    }

    // Removed: the next renew takes the file and the snippet line away.
    const maps = (await app.http.get(P(), { token: owner.token })).body.data.host_principals as Array<{ id: string; host_pattern: string }>;
    for (const m of maps) expect((await app.http.delete(`${P()}/${m.id}`, { token: owner.token })).status).toBe(200);
    const again = await keyward(["host", "renew", "--dir", dir, "--sshd-config-dir", join(dir, "sshd_config.d"), "--json"]);
    expect(again.code, again.stderr).toBe(0);
    expect(existsSync(principalsFile)).toBe(false);
    expect(readFileSync(join(dir, "sshd_config.d", "50-keyward.conf"), "utf8")).not.toContain("AuthorizedPrincipalsFile");
  });
});
