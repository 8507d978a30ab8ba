import { spawn, spawnSync } from "node:child_process";
import { chmodSync, mkdtempSync, readFileSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startTestApp, type TestApp } from "../helpers/app.js";
import { buildCli, CLI } from "../helpers/cli.js";
import { newOrg } from "../factories/orgs.js";
import { newUser, type TestUser } from "../factories/users.js";

/**
 * docs/ssh.md's "Enroll a server" runs as written: its ```sh blocks, in order, in one
 * `bash -euo pipefail`, with `URL`, `T` and `ORG` as "Your first hour" leaves them (a running
 * Keyward, an owner's session token, a new organization) and `keyward` on the PATH. Blocks whose
 * first line is a comment in parentheses happen elsewhere and are skipped, by that rule alone. The
 * only changes are the directories in the `SSH_DIR=` and `UNIT_DIR=` lines (a temporary /etc/ssh
 * with host keys, a temporary unit directory). Then what it wrote must be what sshd and systemd need.
 */
const DOC = resolve(import.meta.dirname, "../../docs/ssh.md");
const SSH_DIR_LINE = "SSH_DIR=/etc/ssh";
const UNIT_DIR_LINE = "UNIT_DIR=/etc/systemd/system";

function blocks(doc: string): { run: string[]; skipped: string[] } {
  const lines = doc.split("\n");
  const start = lines.findIndex((l) => l.trimEnd() === "## Enroll a server");
  if (start < 0) throw new Error('docs/ssh.md has no "## Enroll a server" section');
  const next = lines.findIndex((l, i) => i > start && l.startsWith("## "));
  const out = { run: [] as string[], skipped: [] as string[] };
  let fence: { lang: string; body: string[] } | null = null;
  for (const line of lines.slice(start + 1, next < 0 ? undefined : next)) {
    if (!fence) {
      const open = /^```(\S*)\s*$/.exec(line);
      if (open) fence = { lang: open[1]!, body: [] };
    } else if (/^```\s*$/.test(line)) {
      if (fence.lang === "sh") {
        const first = fence.body.find((l) => l.trim() !== "") ?? "";
        (/^#\s*\(/.test(first.trim()) ? out.skipped : out.run).push(fence.body.join("\n"));
      }
      fence = null;
    } else fence.body.push(line);
  }
  if (fence) throw new Error("docs/ssh.md: a fenced block in Enroll a server is not closed");
  return out;
}

let app: TestApp;
let owner: TestUser;
let org: { id: string };

beforeAll(async () => {
  buildCli();
  app = await startTestApp({ RATE_LIMIT_ENABLED: "false" });
  owner = await newUser(app);
  org = await newOrg(app, owner);
});
afterAll(() => app?.close());

describe('docs/ssh.md "Enroll a server"', () => {
  it("runs as written and leaves host certificates, the sshd snippet and the renewal timer", async () => {
    const { run, skipped } = blocks(readFileSync(DOC, "utf8"));
    expect(run.length).toBeGreaterThanOrEqual(4);
    expect(skipped.length).toBeGreaterThanOrEqual(2);
    const sshDir = mkdtempSync(join(tmpdir(), "kw-readme-etc-ssh-"));
    const unitDir = mkdtempSync(join(tmpdir(), "kw-readme-units-"));
    for (const type of ["ed25519", "ecdsa", "rsa"]) {
      spawnSync("ssh-keygen", ["-q", "-t", type, "-N", "", "-C", "root@web1", "-f", join(sshDir, `ssh_host_${type}_key`)]);
      chmodSync(join(sshDir, `ssh_host_${type}_key`), 0o600);
    }
    const bin = mkdtempSync(join(tmpdir(), "kw-readme-bin-"));
    writeFileSync(join(bin, "keyward"), `#!/bin/sh\nexec "${process.execPath}" "${CLI}" "$@"\n`, { mode: 0o755 });

    let script = run.join("\n");
    for (const line of [SSH_DIR_LINE, UNIT_DIR_LINE]) expect(script.split("\n").filter((l) => l === line), line).toHaveLength(1);
    script = script.replace(SSH_DIR_LINE, `SSH_DIR=${sshDir}`).replace(UNIT_DIR_LINE, `UNIT_DIR=${unitDir}`);

    const result = await new Promise<{ code: number | null; out: string }>((done) => {
      const child = spawn("bash", ["-euo", "pipefail", "-c", script], {
        env: { PATH: `${bin}:${process.env.PATH}`, HOME: mkdtempSync(join(tmpdir(), "kw-readme-home-")), URL: app.url, T: owner.token, ORG: org.id, NO_COLOR: "1" },
        stdio: ["ignore", "pipe", "pipe"],
      });
      let out = "";
      child.stdout.on("data", (d: Buffer) => (out += d.toString()));
      child.stderr.on("data", (d: Buffer) => (out += d.toString()));
      child.on("close", (code) => done({ code, out }));
    });
    expect(result.code, result.out).toBe(0);
    expect(result.out).toContain("Enrolled web1.example.com, 127.0.0.1");
    expect(result.out).toContain("RandomizedDelaySec=15min");

    const cert = spawnSync("ssh-keygen", ["-L", "-f", join(sshDir, "ssh_host_ed25519_key-cert.pub")], { encoding: "utf8" }).stdout;
    expect(cert).toContain("host certificate");
    expect(cert).toMatch(/Principals:\s+web1\.example\.com\s+127\.0\.0\.1/);
    const snippet = readFileSync(join(sshDir, "sshd_config.d", "50-keyward.conf"), "utf8");
    for (const type of ["ed25519", "ecdsa", "rsa"]) expect(snippet).toContain(`HostCertificate ${join(sshDir, `ssh_host_${type}_key-cert.pub`)}`);
    expect(snippet).toContain(`RevokedKeys ${join(sshDir, "keyward_revoked_keys.krl")}`);
    const check = join(sshDir, "sshd_config.check");
    writeFileSync(check, `HostKey ${join(sshDir, "ssh_host_ed25519_key")}\nInclude ${join(sshDir, "sshd_config.d", "*.conf")}\n`);
    const checked = spawnSync("/usr/sbin/sshd", ["-t", "-f", check], { encoding: "utf8" });
    expect(checked.status, checked.stderr).toBe(0);
    expect(readFileSync(join(unitDir, "keyward-host-renew.service"), "utf8")).toContain(`host renew --dir ${sshDir}`);
    expect(readFileSync(join(unitDir, "keyward-host-renew.timer"), "utf8")).toContain("WantedBy=timers.target");
    const hosts = await app.http.get(`/api/v1/organizations/${org.id}/ssh/hosts`, { token: owner.token });
    expect(hosts.body.data.hosts.map((h: { name: string }) => h.name)).toEqual(["web1.example.com"]);
  });
});
