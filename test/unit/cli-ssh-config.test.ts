import { mkdtempSync, readFileSync, readlinkSync, statSync, symlinkSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { installInclude, render } from "../../src/cli/commands/ssh-config.js";
import { writeAtomic } from "../../src/cli/atomic-write.js";

/** The pieces of `keyward ssh config` that touch the person's files, without a server. */
const dir = () => mkdtempSync(join(tmpdir(), "kw-sshcfg-unit-"));
const INCLUDE = "Include /home/me/.ssh/keyward/config";

const org = (over: Record<string, unknown> = {}) => ({
  id: "11111111-2222-4333-8444-555555555555",
  name: "Acme",
  slug: "acme",
  has_user_ca: true,
  host_ca: { id: "h", name: "Hosts", host_patterns: ["*.prod.example.com"], known_hosts: ["@cert-authority *.prod.example.com,[*.prod.example.com]:* ssh-ed25519 AAAA k"] },
  ...over,
});
const key = (privatePath: string) => ({ privatePath, publicPath: `${privatePath}.pub`, publicLine: "ssh-ed25519 AAAA", comment: "" });

describe("installInclude", () => {
  it("puts the marked block at the top of an existing file and keeps every other byte", () => {
    const d = dir();
    const file = join(d, "config");
    const mine = "Host *\n  ServerAliveInterval 30\n\nHost old\n  HostName 10.0.0.1\n";
    writeFileSync(file, mine, { mode: 0o600 });
    expect(installInclude(file, INCLUDE).changed).toBe(true);
    const after = readFileSync(file, "utf8");
    expect(after.split("\n")[1]).toBe(INCLUDE);
    expect(after.endsWith(`<<<\n\n${mine}`)).toBe(true);
    expect(installInclude(file, INCLUDE).changed).toBe(false);
    expect(readFileSync(file, "utf8")).toBe(after);
  });

  it("refreshes its block where the person moved it, and only that block", () => {
    const d = dir();
    const file = join(d, "config");
    writeFileSync(file, "# mine first\n# >>> keyward ssh config (managed by keyward: run `keyward ssh config --install` to change) >>>\nInclude /old/path\n# <<< keyward ssh config <<<\nHost x\n");
    installInclude(file, INCLUDE);
    expect(readFileSync(file, "utf8")).toBe(`# mine first\n# >>> keyward ssh config (managed by keyward: run \`keyward ssh config --install\` to change) >>>\n${INCLUDE}\n# <<< keyward ssh config <<<\nHost x\n`);
  });

  it("refuses a block without its end rather than guess where it stops", () => {
    const file = join(dir(), "config");
    const broken = "# >>> keyward ssh config (managed by keyward: run `keyward ssh config --install` to change) >>>\nHost mine\n";
    writeFileSync(file, broken);
    expect(() => installInclude(file, INCLUDE)).toThrow(/not its end/);
    expect(readFileSync(file, "utf8")).toBe(broken);
  });

  it("creates a missing file with mode 0600, and writes through a symbolic link (dotfile managers)", () => {
    const d = dir();
    installInclude(join(d, "fresh"), INCLUDE);
    expect(statSync(join(d, "fresh")).mode & 0o777).toBe(0o600);
    writeFileSync(join(d, "real"), "Host a\n", { mode: 0o644 });
    symlinkSync(join(d, "real"), join(d, "link"));
    installInclude(join(d, "link"), INCLUDE);
    expect(readlinkSync(join(d, "link"))).toBe(join(d, "real"));
    expect(readFileSync(join(d, "real"), "utf8")).toContain(INCLUDE);
    expect(statSync(join(d, "real")).mode & 0o777).toBe(0o644);
  });
});

describe("render", () => {
  it("quotes a path with a space and doubles %, so ssh reads the path it was given", () => {
    const { config } = render("https://id.example.com", key("/home/a b/.ssh/id_50%"), [org()], { knownHosts: "/home/a b/.ssh/keyward/known_hosts", home: "/home/a b" });
    expect(config).toContain('  IdentityFile "/home/a b/.ssh/id_50%%"');
    expect(config).toContain("'/home/a b/.ssh/id_50%%' --quiet\"");
    expect(config).toContain('UserKnownHostsFile "/home/a b/.ssh/keyward/known_hosts" "/home/a b/.ssh/known_hosts"');
  });

  it("refuses a path ssh_config cannot hold, and gives the same bytes for the same input", () => {
    expect(() => render("https://id.example.com", key('/home/x"y/k'), [org()], { knownHosts: "/k", home: "/h" })).toThrow(/cannot/);
    const a = render("https://id.example.com", key("/h/k"), [org()], { knownHosts: "/k", home: "/h" });
    expect(render("https://id.example.com", key("/h/k"), [org()], { knownHosts: "/k", home: "/h" })).toEqual(a);
    expect(a.config).toMatch(/^Match host \*\.prod\.example\.com exec "/m);
    expect(a.knownHosts).toContain("@cert-authority *.prod.example.com,[*.prod.example.com]:* ssh-ed25519 AAAA k");
  });
});

describe("render, given a hostile answer", () => {
  it("keeps a name with line breaks inside its comment, and refuses a known_hosts line or id that is not one", () => {
    const { config, knownHosts } = render("https://id.example.com", key("/h/k"), [org({ name: "Acme\nHost *\n  ProxyCommand evil" })], { knownHosts: "/k", home: "/h" });
    for (const text of [config, knownHosts]) {
      expect(text).not.toMatch(/^\s*(Host|ProxyCommand)\b/m);
      expect(text).toMatch(/^# Acme Host \* +ProxyCommand evil \(acme, /m);
    }
    const withLine = (line: string) => org({ host_ca: { id: "h", name: "H", host_patterns: ["*.x.com"], known_hosts: [line] } });
    expect(() => render("https://id.example.com", key("/h/k"), [withLine("@cert-authority *.x.com ssh-ed25519 AAAA\nHost *")], { knownHosts: "/k", home: "/h" })).toThrow(/will not write/);
    expect(() => render("https://id.example.com", key("/h/k"), [withLine("*.x.com ssh-ed25519 AAAA")], { knownHosts: "/k", home: "/h" })).toThrow(/will not write/);
    expect(() => render("https://id.example.com", key("/h/k"), [org({ id: "x; rm -rf ~" })], { knownHosts: "/k", home: "/h" })).toThrow(/not one/);
  });
});

describe("writeAtomic", () => {
  it("leaves no temporary file and reports whether the content changed", () => {
    const d = dir();
    expect(writeAtomic(join(d, "f"), "one\n")).toBe(true);
    expect(writeAtomic(join(d, "f"), "one\n")).toBe(false);
    expect(writeAtomic(join(d, "f"), "two\n")).toBe(true);
    expect(readFileSync(join(d, "f"), "utf8")).toBe("two\n");
    expect(statSync(join(d, "f")).mode & 0o777).toBe(0o600);
  });
});
