import { spawn } from "node:child_process";
import { chmodSync, existsSync, mkdirSync, mkdtempSync, readFileSync, readdirSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startTestApp, type TestApp } from "../helpers/app.js";
import { buildCli, CLI } from "../helpers/cli.js";
import { OidcAgent } from "../helpers/oidc-agent.js";
import { startSshd } from "../helpers/sshd.js";
import { addMember, newOrg } from "../factories/orgs.js";
import { createCa, grantPrincipal, keysDir, makeKey } from "../factories/ssh.js";
import { newUser, type TestUser } from "../factories/users.js";

/**
 * docs/ssh.md's "Everyday SSH" runs as written: its ```sh blocks, in order, in one
 * `bash -euo pipefail`, with HOME a fresh directory. Only the `export KEYWARD_SERVER=` line is
 * changed (to this server). What the section presumes is set up here first, as an admin would:
 * the organization, its user CA, a host CA with host patterns, the person's principal, and a real
 * sshd presenting a host certificate for web1.prod.example.com. Three things stand in for the
 * person's machine: the browser (an OidcAgent signs in and allows the CLI when `keyward login`
 * prints its address), DNS (a `Host web1.prod.example.com` entry already in ~/.ssh/config points at
 * the loopback sshd), and the passwd home (ssh reads ~/.ssh/config from the account's home, not
 * from $HOME, so `ssh` on the PATH is `ssh -F $HOME/.ssh/config`, also with StrictHostKeyChecking
 * yes and BatchMode). `keyward` on the PATH is the built client.
 */
const DOC = resolve(import.meta.dirname, "../../docs/ssh.md");
const SERVER_LINE = "export KEYWARD_SERVER=https://keyward.example.com";
const HOST = "web1.prod.example.com";

/** The ```sh blocks between "## <heading>" and the next "## " heading. */
function sectionBlocks(doc: string, heading: string): string[] {
  const lines = doc.split("\n");
  const start = lines.findIndex((l) => l.trimEnd() === `## ${heading}`);
  if (start < 0) throw new Error(`docs/ssh.md has no "## ${heading}" section`);
  const next = lines.findIndex((l, i) => i > start && l.startsWith("## "));
  const blocks: string[] = [];
  let fence: { lang: string; body: string[] } | null = null;
  for (const line of lines.slice(start + 1, next < 0 ? undefined : next)) {
    if (!fence) {
      const open = /^```(\S*)\s*$/.exec(line);
      if (open) fence = { lang: open[1]!, body: [] };
    } else if (/^```\s*$/.test(line)) {
      if (fence.lang === "sh") blocks.push(fence.body.join("\n"));
      fence = null;
    } else fence.body.push(line);
  }
  if (fence) throw new Error(`docs/ssh.md: a fenced block in ${heading} is not closed`);
  return blocks;
}

let app: TestApp;
let person: TestUser;
let sshd: Awaited<ReturnType<typeof startSshd>>;
let home: string;
let walk: { code: number | null; output: string };
let foreign: string;

/** Runs the script; when `keyward login` prints its address, the "browser" signs in and allows it. */
function runWalk(script: string, env: NodeJS.ProcessEnv): Promise<{ code: number | null; output: string }> {
  return new Promise((done) => {
    const child = spawn("bash", ["-x", "-euo", "pipefail", script], { cwd: home, env, stdio: ["ignore", "pipe", "pipe"] });
    let output = "";
    let browsing = false;
    const onData = (d: Buffer) => {
      output += d;
      const url = /https?:\/\/\S+\/authorize\?\S+/.exec(output)?.[0];
      if (url && !browsing) {
        browsing = true;
        void (async () => {
          const agent = new OidcAgent(app.url);
          await agent.signIn(person.email, person.password);
          const redirectUri = new URL(url).searchParams.get("redirect_uri")!;
          const stop = await agent.follow(url, redirectUri);
          await fetch(stop.url);
        })().catch((e) => (output += `\n[browser] ${String(e)}\n`));
      }
    };
    child.stdout.on("data", onData);
    child.stderr.on("data", onData);
    const timer = setTimeout(() => child.kill("SIGKILL"), 120_000);
    child.once("exit", (code) => {
      clearTimeout(timer);
      done({ code, output });
    });
  });
}

beforeAll(async () => {
  buildCli();
  app = await startTestApp({ RATE_LIMIT_ENABLED: "false" });
  const owner = await newUser(app, { fullName: "Owner" });
  person = await newUser(app, { fullName: "Person" });
  const org = await newOrg(app, owner, `Everyday ${Date.now().toString(36)}`);
  const userCa = await createCa(app, org.id, owner);
  const hostCa = await createCa(app, org.id, owner, { name: "Servers", ca_type: "host" });
  await app.http.patch(`/api/v1/organizations/${org.id}/cas/${hostCa.id}`, { host_patterns: ["*.prod.example.com"] }, { token: owner.token });
  await addMember(app, org.id, owner, person, "member");
  // sshd runs as root here: the principal is the account it logs in as.
  await grantPrincipal(app, org.id, owner, person, "root");
  const hostKey = makeKey("ed25519");
  chmodSync(hostKey.path, 0o600);
  const signed = await app.http.post("/api/v1/ssh/sign/host", { host_public_key: hostKey.pub, principals: [HOST], org_id: org.id }, { token: owner.token });
  writeFileSync(`${hostKey.path}-cert.pub`, `${signed.body.data.certificate}\n`);
  const krl = join(keysDir, "everyday.krl");
  writeFileSync(krl, Buffer.from(await (await fetch(`${app.url}/api/v1/organizations/${org.id}/ssh/krl`)).arrayBuffer()));
  sshd = await startSshd({ trustedUserCaKeys: `${userCa.public_key}\n`, hostKeyPath: hostKey.path, hostCertPath: `${hostKey.path}-cert.pub`, krlPath: krl });

  home = mkdtempSync(join(tmpdir(), "kw-everyday-"));
  mkdirSync(join(home, ".ssh"), { mode: 0o700 });
  foreign = `Host ${HOST}\n  HostName 127.0.0.1\n  Port ${sshd.port}\n  HostKeyAlias ${HOST}\n  User root\n`;
  writeFileSync(join(home, ".ssh", "config"), foreign, { mode: 0o600 });
  const bin = join(home, "bin");
  mkdirSync(bin);
  writeFileSync(join(bin, "keyward"), `#!/bin/sh\nexec "${process.execPath}" "${CLI}" "$@"\n`, { mode: 0o755 });
  writeFileSync(join(bin, "ssh"), `#!/bin/sh\nexec /usr/bin/ssh -F "$HOME/.ssh/config" -o StrictHostKeyChecking=yes -o BatchMode=yes -o GlobalKnownHostsFile=/dev/null "$@"\n`, { mode: 0o755 });

  const blocks = sectionBlocks(readFileSync(DOC, "utf8"), "Everyday SSH");
  const all = blocks.join("\n").split("\n");
  if (all.filter((l) => l.trim() === SERVER_LINE).length !== 1) throw new Error(`Everyday SSH must set ${SERVER_LINE} exactly once`);
  const script = join(home, "everyday.sh");
  writeFileSync(script, blocks.map((b) => b.split("\n").map((l) => (l.trim() === SERVER_LINE ? `export KEYWARD_SERVER=${app.url}` : l)).join("\n")).join("\n\n") + "\n");
  walk = await runWalk(script, { PATH: `${bin}:${process.env.PATH}`, HOME: home, LANG: "C.UTF-8", KEYWARD_NO_BROWSER: "1", TERM: "dumb" });
}, 240_000);
afterAll(async () => {
  sshd?.stop();
  await app?.close();
});

describe("docs/ssh.md: Everyday SSH", () => {
  it("has the three steps: login, config, ssh", () => {
    const all = sectionBlocks(readFileSync(DOC, "utf8"), "Everyday SSH").join("\n");
    for (const step of ["keyward login", "keyward ssh config --install", `ssh ${HOST}`]) expect(all).toContain(step);
  });

  it("runs as written: the first ssh signs the certificate on the way and trusts the host through its CA", async () => {
    expect(walk.code, `walk-through failed:\n${walk.output}\n--- sshd ---\n${sshd.log()}`).toBe(0);
    expect(walk.output).toContain("signed in as root");
    expect(await sshd.waitForLog(/Accepted certificate ID "[^"]+ \[org:/)).toBe(true);
    const certs = readdirSync(join(home, ".ssh", "keyward")).filter((f) => f.endsWith("-cert.pub"));
    expect(certs).toHaveLength(1);
    expect(walk.output).toMatch(/keyward\/[0-9a-f-]+-cert\.pub\n\s+valid for/);
  });

  it("left the person's own ~/.ssh/config lines as they were, below keyward's block", () => {
    const config = readFileSync(join(home, ".ssh", "config"), "utf8");
    expect(config.startsWith("# >>> keyward ssh config")).toBe(true);
    expect(config.endsWith(`\n${foreign}`)).toBe(true);
    expect(existsSync(join(home, ".ssh", "keyward", "known_hosts"))).toBe(true);
  });
});
