import { spawn, spawnSync, type ChildProcess } from "node:child_process";
import { chmodSync, existsSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, writeFileSync } from "node:fs";
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
 * `keyward host enroll` / `renew` / `install-timer` against a real OpenSSH sshd on loopback: the
 * sshd runs with the snippet enroll wrote (host certificate, TrustedUserCAKeys, RevokedKeys); a
 * client that trusts only the organization's host CA (@cert-authority, StrictHostKeyChecking yes)
 * accepts it and logs in with a user certificate; renewal near expiry (the server's clock moved)
 * brings a new serial; a user certificate revoked since is refused once renew refreshed the KRL;
 * refusals (reused, expired, foreign, malformed token; a key the host does not hold) write nothing.
 */
let app: TestApp;
let ctx: { orgId: string; owner: TestUser; member: TestUser; key: LocalKey; keyId: string; otherOrgId: string; otherOwner: TestUser };

beforeAll(async () => {
  buildCli();
  // Host certificates last an hour here (renewal window after 40 minutes); a large backdate keeps
  // what the server signs after its clock moved valid for the real clocks of ssh and sshd.
  app = await startTestApp({ RATE_LIMIT_ENABLED: "false", SSH_CERT_BACKDATE_SECONDS: "7200" });
  const { org, owner, member } = await orgWithRoles(app);
  await createCa(app, org.id, owner, { name: "Users" });
  await createCa(app, org.id, owner, { name: "Hosts", ca_type: "host", default_cert_validity_hours: 1 });
  await grantPrincipal(app, org.id, owner, member, "root");
  const key = makeKey("ed25519");
  const { id } = await addVerifiedKey(app, member, key);
  const other = await orgWithRoles(app);
  await createCa(app, other.org.id, other.owner, { name: "Hosts", ca_type: "host" });
  ctx = { orgId: org.id, owner, member, key, keyId: id, otherOrgId: other.org.id, otherOwner: other.owner };
});
afterAll(() => app?.close());

/** The CLI as a child process (asynchronously: the server answering it runs in this process). */
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

/** A server's /etc/ssh: host keys as ssh-keygen -A makes them. */
function hostDir(): string {
  const dir = mkdtempSync(join(tmpdir(), "kw-etc-ssh-"));
  for (const type of ["ed25519", "ecdsa"]) {
    spawnSync("ssh-keygen", ["-q", "-t", type, "-N", "", "-C", `root@host`, "-f", join(dir, `ssh_host_${type}_key`)]);
    chmodSync(join(dir, `ssh_host_${type}_key`), 0o600);
  }
  return dir;
}
const snapshot = (dir: string) => Object.fromEntries(readdirSync(dir, { recursive: true }).map((f) => String(f)).sort().map((f) => [f, existsSync(join(dir, f)) && !f.endsWith("sshd_config.d") ? readFileSync(join(dir, f), "latin1") : "dir"]));

async function token(names: string[], orgId = ctx.orgId, by = ctx.owner, body: Record<string, unknown> = {}) {
  const res = await app.http.post(`/api/v1/organizations/${orgId}/ssh/host-enrollment-tokens`, { names, ...body }, { token: by.token });
  expect(res.status, res.text).toBe(201);
  return res.body.data.enrollment_token.token as string;
}

const enroll = (dir: string, t: string, extra: string[] = []) => keyward(["host", "enroll", "--server", app.url, "--token", t, "--dir", dir, "--sshd-config-dir", join(dir, "sshd_config.d"), "--json", ...extra]);
const renew = (dir: string, extra: string[] = []) => keyward(["host", "renew", "--dir", dir, "--sshd-config-dir", join(dir, "sshd_config.d"), "--json", ...extra]);

const freePort = () =>
  new Promise<number>((resolve) => {
    const s = createServer().listen(0, "127.0.0.1", () => {
      const port = (s.address() as { port: number }).port;
      s.close(() => resolve(port));
    });
  });

/** sshd configured by the snippet `keyward host enroll` wrote (Include), nothing else about certificates. */
async function sshdWithSnippet(dir: string) {
  mkdirSync("/run/sshd", { recursive: true });
  const port = await freePort();
  const config = join(dir, "sshd_config");
  writeFileSync(
    config,
    [
      `Port ${port}`,
      "ListenAddress 127.0.0.1",
      `HostKey ${join(dir, "ssh_host_ed25519_key")}`,
      `HostKey ${join(dir, "ssh_host_ecdsa_key")}`,
      `Include ${join(dir, "sshd_config.d", "*.conf")}`,
      "AuthorizedKeysFile none",
      "PasswordAuthentication no",
      "KbdInteractiveAuthentication no",
      "UsePAM no",
      "PermitRootLogin prohibit-password",
      "StrictModes no",
      `PidFile ${join(dir, "sshd.pid")}`,
      "LogLevel VERBOSE",
      "",
    ].join("\n"),
  );
  const log: string[] = [];
  const proc: ChildProcess = spawn("/usr/sbin/sshd", ["-D", "-e", "-f", config], { stdio: ["ignore", "ignore", "pipe"] });
  proc.stderr!.on("data", (d: Buffer) => log.push(d.toString()));
  const listening = async (n: number) => {
    for (let i = 0; i < 100 && log.join("").split("Server listening").length - 1 < n; i++) await new Promise((r) => setTimeout(r, 100));
    if (log.join("").split("Server listening").length - 1 < n) throw new Error(`sshd did not start: ${log.join("")}`);
  };
  await listening(1);
  return {
    proc,
    log: () => log.join(""),
    listening,
    login(certificate: string, knownHosts: string) {
      const kh = join(dir, `known_hosts_${Math.random().toString(36).slice(2)}`);
      writeFileSync(kh, knownHosts);
      const r = spawnSync(
        "ssh",
        ["-p", String(port), "-i", ctx.key.path, "-o", `CertificateFile=${certificate}`, "-o", "IdentitiesOnly=yes", "-o", "BatchMode=yes", "-o", `UserKnownHostsFile=${kh}`, "-o", "StrictHostKeyChecking=yes", "-o", "ConnectTimeout=10", "root@127.0.0.1", "true"],
        { encoding: "utf8", timeout: 20_000 },
      );
      return { status: r.status, stderr: r.stderr };
    },
  };
}

let certSeq = 0;
async function userCert(): Promise<{ path: string; id: string }> {
  const res = await app.http.post("/api/v1/ssh/sign", { key_id: ctx.keyId, principals: ["root"], org_id: ctx.orgId }, { token: ctx.member.token });
  expect(res.status, res.text).toBe(201);
  const path = join(keysDir, `host-e2e-${certSeq++}-cert.pub`);
  writeFileSync(path, res.body.data.certificate + "\n");
  return { path, id: res.body.data.id };
}

const serialOf = (certFile: string) => /Serial: (\d+)/.exec(spawnSync("ssh-keygen", ["-L", "-f", certFile], { encoding: "utf8" }).stdout)?.[1];

describe("keyward host with a real sshd", () => {
  it("enrolls, serves the host certificate to a strict client, renews near expiry and refreshes the KRL", async () => {
    const dir = hostDir();
    const t = await token(["127.0.0.1", "localhost"]);

    // --dry-run sends nothing (the token stays unspent) and writes nothing.
    const before = snapshot(dir);
    const dry = await keyward(["host", "enroll", "--server", app.url, "--token", t, "--dir", dir, "--dry-run"]);
    expect(dry.code, dry.stderr).toBe(0);
    expect(dry.stdout).toContain("Nothing was sent");
    expect(snapshot(dir)).toEqual(before);

    const enrolled = await enroll(dir, t);
    expect(enrolled.code, enrolled.stderr).toBe(0);
    const out = JSON.parse(enrolled.stdout);
    expect(out.certificates).toHaveLength(2);
    const edCert = join(dir, "ssh_host_ed25519_key-cert.pub");
    const listing = spawnSync("ssh-keygen", ["-L", "-f", edCert], { encoding: "utf8" }).stdout;
    expect(listing).toContain("host certificate");
    expect(listing).toMatch(/Principals:\s+127\.0\.0\.1\s+localhost/);
    const snippet = readFileSync(join(dir, "sshd_config.d", "50-keyward.conf"), "utf8");
    expect(snippet).toContain(`HostCertificate ${edCert}`);
    expect(snippet).toContain(`HostCertificate ${join(dir, "ssh_host_ecdsa_key-cert.pub")}`);
    expect(snippet).toContain(`TrustedUserCAKeys ${join(dir, "keyward_trusted_user_ca_keys")}`);
    expect(snippet).toContain(`RevokedKeys ${join(dir, "keyward_revoked_keys.krl")}`);
    expect(readFileSync(join(dir, "keyward_trusted_user_ca_keys"), "utf8")).toMatch(/^ssh-ed25519 /);
    expect(JSON.parse(readFileSync(join(dir, "keyward-host.json"), "utf8"))).toMatchObject({ organization_id: ctx.orgId, host_id: out.host.id, server: app.url });
    expect(readdirSync(dir).filter((f) => f.endsWith(".tmp"))).toEqual([]);
    const check = join(dir, "sshd_config.check");
    writeFileSync(check, `HostKey ${join(dir, "ssh_host_ed25519_key")}\nInclude ${join(dir, "sshd_config.d", "*.conf")}\n`);
    const checked = spawnSync("/usr/sbin/sshd", ["-t", "-f", check], { encoding: "utf8" });
    expect(checked.status, checked.stderr).toBe(0);

    // The same token again: refused, nothing changes on the host.
    const after = snapshot(dir);
    const reused = await enroll(dir, t);
    expect(reused.code).toBe(1);
    expect(reused.stderr).toContain("ENROLLMENT_TOKEN_USED");
    expect(snapshot(dir)).toEqual(after);

    const knownHosts = (await app.http.get(`/api/v1/organizations/${ctx.orgId}/ssh/ca-keys`, { token: ctx.member.token })).body.data.known_hosts as string;
    expect(knownHosts).toMatch(/^@cert-authority /);
    const revokedLater = await userCert();
    const kept = await userCert();
    const sshd = await sshdWithSnippet(dir);
    try {
      const first = sshd.login(kept.path, knownHosts);
      expect(first.status, `${first.stderr}\n${sshd.log()}`).toBe(0);
      for (let i = 0; i < 60 && !/Accepted certificate ID/.test(sshd.log()); i++) await new Promise((r) => setTimeout(r, 50));
      expect(sshd.log()).toMatch(/Accepted certificate ID/);
      // Without the organization's host CA the strict client refuses the server.
      expect(sshd.login(kept.path, "# nothing trusted\n").status).not.toBe(0);

      // Not due yet: renew refreshes the files, keeps the serial.
      const serial1 = serialOf(edCert);
      const early = await renew(dir);
      expect(early.code, early.stderr).toBe(0);
      expect(JSON.parse(early.stdout).renewed).toBe(false);
      expect(serialOf(edCert)).toBe(serial1);

      // A user certificate revoked now: still let in until the host refreshes its KRL.
      expect((await app.http.post(`/api/v1/ssh/certificates/${revokedLater.id}/revoke`, { reason: "lost laptop" }, { token: ctx.member.token })).status).toBe(200);
      expect(sshd.login(revokedLater.path, knownHosts).status).toBe(0);

      // 45 minutes later on the server's clock: inside the last third of the hour, renew gets new certificates
      // (and refreshes the KRL); --on-renew reloads sshd so it serves them.
      app.clock.advance(45 * 60);
      const due = await renew(dir, ["--on-renew", `kill -HUP ${sshd.proc.pid}`]);
      expect(due.code, due.stderr).toBe(0);
      const renewed = JSON.parse(due.stdout);
      expect(renewed.renewed).toBe(true);
      expect(renewed.on_renew).toBe("ok");
      const serial2 = serialOf(edCert);
      expect(serial2).not.toBe(serial1);
      await sshd.listening(2);
      const hosts = (await app.http.get(`/api/v1/organizations/${ctx.orgId}/ssh/hosts`, { token: ctx.owner.token })).body.data.hosts;
      expect(hosts.find((h: { id: string }) => h.id === out.host.id)).toMatchObject({ last_renewed_at: expect.any(String) });

      const again = sshd.login(kept.path, knownHosts);
      expect(again.status, `${again.stderr}\n${sshd.log()}`).toBe(0);
      const refused = sshd.login(revokedLater.path, knownHosts);
      expect(refused.status).not.toBe(0);
      expect(spawnSync("ssh-keygen", ["-Q", "-f", join(dir, "keyward_revoked_keys.krl"), revokedLater.path], { encoding: "utf8" }).stdout).toContain("REVOKED");
    } finally {
      sshd.proc.kill("SIGTERM");
    }

    // A host that does not hold the enrolled keys (new keys, the old state file) cannot renew; nothing is written.
    const impostor = hostDir();
    writeFileSync(join(impostor, "keyward-host.json"), readFileSync(join(dir, "keyward-host.json")));
    const impostorBefore = snapshot(impostor);
    const denied = await renew(impostor, ["--force"]);
    expect(denied.code).toBe(1);
    expect(denied.stderr).toContain("RENEW_PROOF_INVALID");
    expect(snapshot(impostor)).toEqual(impostorBefore);
  });

  it("writes nothing for expired, foreign, malformed or unknown tokens", async () => {
    const dir = hostDir();
    const before = snapshot(dir);
    const expired = await token(["127.0.0.1"], ctx.orgId, ctx.owner, { lifetime_minutes: 1 });
    const foreign = await token(["127.0.0.1"], ctx.otherOrgId, ctx.otherOwner);
    app.clock.advance(120);
    const cases: Array<[string, string[], string]> = [
      [expired, [], "ENROLLMENT_TOKEN_EXPIRED"],
      [foreign, ["--org-id", ctx.orgId], "ENROLLMENT_TOKEN_FOREIGN"],
      ["not-a-token", [], "VALIDATION_ERROR"],
      ["kwh_00000000_unknown", [], "ENROLLMENT_TOKEN_INVALID"],
    ];
    for (const [t, extra, type] of cases) {
      const r = await enroll(dir, t, extra);
      expect(r.code, `${t}: ${r.stdout}${r.stderr}`).toBe(1);
      expect(JSON.parse(r.stdout).error.type).toBe(type);
      expect(r.stderr).toContain("nothing was written");
      expect(snapshot(dir)).toEqual(before);
    }
    // The foreign token still works for a host of its own organization.
    expect((await enroll(dir, foreign)).code).toBe(0);
  });

  it("installs a systemd service and timer with jitter", async () => {
    const units = mkdtempSync(join(tmpdir(), "kw-units-"));
    const r = await keyward(["host", "install-timer", "--unit-dir", units, "--dir", "/etc/ssh", "--json"]);
    expect(r.code, r.stderr).toBe(0);
    const service = readFileSync(join(units, "keyward-host-renew.service"), "utf8");
    const timer = readFileSync(join(units, "keyward-host-renew.timer"), "utf8");
    expect(service).toContain("Type=oneshot");
    expect(service).toMatch(/^ExecStart=\/\S+ \S+keyward\.mjs host renew --dir \/etc\/ssh --sshd-config-dir \/etc\/ssh\/sshd_config\.d --on-renew "systemctl try-reload-or-restart ssh\.service sshd\.service"$/m);
    expect(timer).toContain("RandomizedDelaySec=15min");
    expect(timer).toContain("OnCalendar=hourly");
    expect(timer).toContain("WantedBy=timers.target");
    if (spawnSync("systemd-analyze", ["--version"]).status === 0) {
      const verify = spawnSync("systemd-analyze", ["verify", "--man=no", join(units, "keyward-host-renew.timer"), join(units, "keyward-host-renew.service")], { encoding: "utf8" });
      expect(verify.stderr.split("\n").filter((l) => /keyward-host-renew/.test(l))).toEqual([]);
    }
  });
});
