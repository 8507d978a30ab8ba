import { spawn, spawnSync, type ChildProcess } from "node:child_process";
import { mkdirSync, mkdtempSync, writeFileSync } from "node:fs";
import { createServer } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";

const freePort = () =>
  new Promise<number>((resolve) => {
    const s = createServer().listen(0, "127.0.0.1", () => {
      const port = (s.address() as { port: number }).port;
      s.close(() => resolve(port));
    });
  });

/**
 * A real OpenSSH sshd on a loopback port, trusting the given user-CA keys and reading a KRL on
 * every attempt. It runs as root (CI does), logs in only with certificates, and offers a host
 * certificate when one is given. `extraConfig` lines are appended (AuthorizedPrincipalsFile, …).
 */
export async function startSshd(options: { trustedUserCaKeys: string; hostKeyPath: string; hostCertPath?: string; krlPath: string; extraConfig?: string[] }) {
  const dir = mkdtempSync(join(tmpdir(), "kw-sshd-"));
  mkdirSync("/run/sshd", { recursive: true });
  const port = await freePort();
  const trusted = join(dir, "trusted_user_ca_keys");
  writeFileSync(trusted, options.trustedUserCaKeys);
  const config = join(dir, "sshd_config");
  writeFileSync(
    config,
    [
      `Port ${port}`,
      "ListenAddress 127.0.0.1",
      `HostKey ${options.hostKeyPath}`,
      ...(options.hostCertPath ? [`HostCertificate ${options.hostCertPath}`] : []),
      `TrustedUserCAKeys ${trusted}`,
      `RevokedKeys ${options.krlPath}`,
      "AuthorizedKeysFile none",
      "PasswordAuthentication no",
      "KbdInteractiveAuthentication no",
      "UsePAM no",
      "PermitRootLogin prohibit-password",
      "StrictModes no",
      `PidFile ${join(dir, "sshd.pid")}`,
      "LogLevel VERBOSE",
      ...(options.extraConfig ?? []),
    ].join("\n") + "\n",
  );
  const log: string[] = [];
  const proc: ChildProcess = spawn("/usr/sbin/sshd", ["-D", "-e", "-f", config], { stdio: ["ignore", "ignore", "pipe"] });
  proc.stderr!.on("data", (d: Buffer) => log.push(d.toString()));
  for (let i = 0; i < 50 && !log.join("").includes("Server listening"); i++) await new Promise((r) => setTimeout(r, 100));
  if (!log.join("").includes("Server listening")) throw new Error(`sshd did not start: ${log.join("")}`);
  return {
    port,
    dir,
    log: () => log.join(""),
    /** Waits (briefly) for sshd's log to show a line: its per-connection output arrives asynchronously. */
    async waitForLog(pattern: RegExp, timeoutMs = 3000): Promise<boolean> {
      for (let waited = 0; waited <= timeoutMs; waited += 50) {
        if (pattern.test(log.join(""))) return true;
        await new Promise((r) => setTimeout(r, 50));
      }
      return false;
    },
    /** `ssh … user@127.0.0.1 true`: the exit status and stderr. */
    login(user: string, identity: string, certificate: string, knownHosts?: string) {
      const khFile = join(dir, `known_hosts_${Math.random().toString(36).slice(2)}`);
      writeFileSync(khFile, knownHosts ?? "");
      const result = spawnSync(
        "ssh",
        [
          "-p", String(port),
          "-i", identity,
          "-o", `CertificateFile=${certificate}`,
          "-o", "IdentitiesOnly=yes",
          "-o", "BatchMode=yes",
          "-o", `UserKnownHostsFile=${khFile}`,
          "-o", knownHosts ? "StrictHostKeyChecking=yes" : "StrictHostKeyChecking=no",
          "-o", "ConnectTimeout=10",
          `${user}@127.0.0.1`,
          "true",
        ],
        { encoding: "utf8", timeout: 20_000 },
      );
      return { status: result.status, stderr: result.stderr };
    },
    stop: () => proc.kill("SIGTERM"),
  };
}
