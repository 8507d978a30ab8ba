import { chmodSync, existsSync, mkdtempSync, readFileSync, statSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { configDir, CredentialStore, type ServerCredentials } from "../../src/cli/credentials.js";
import { normalizeServer, resolveServer } from "../../src/cli/server.js";

const creds = (token: string): ServerCredentials => ({
  issuer: "http://localhost:3000",
  resource: "http://localhost:3000/api/v1",
  clientId: "keyward-cli",
  accessToken: token,
  refreshToken: `r-${token}`,
  expiresAt: Date.now() + 3_600_000,
  scope: "openid profile:read",
});

const fresh = () => join(mkdtempSync(join(tmpdir(), "kw-cli-unit-")), "keyward");
const mode = (p: string) => statSync(p).mode & 0o777;

describe("credential store", () => {
  it("writes the file 0600 in a 0700 directory, even under a permissive umask", () => {
    const dir = fresh();
    const old = process.umask(0o000);
    try {
      new CredentialStore(dir).save("http://localhost:3000", creds("a"), true);
    } finally {
      process.umask(old);
    }
    expect(mode(dir)).toBe(0o700);
    expect(mode(join(dir, "credentials.json"))).toBe(0o600);
    // No temporary file is left beside it.
    expect(existsSync(join(dir, `credentials.json.${process.pid}.tmp`))).toBe(false);
  });

  it("keys sign-ins by server and remembers the last one logged in to", () => {
    const store = new CredentialStore(fresh());
    store.save("http://a.test", creds("a"), true);
    store.save("http://b.test", creds("b"), true);
    store.save("http://a.test", { ...creds("a2") });
    expect(store.get("http://a.test")!.accessToken).toBe("a2");
    expect(store.get("http://b.test")!.accessToken).toBe("b");
    expect(store.current()).toBe("http://b.test");
    store.remove("http://b.test");
    expect(store.get("http://b.test")).toBeUndefined();
    expect(JSON.parse(readFileSync(store.path, "utf8")).servers).toHaveProperty(["http://a.test"]);
  });

  it("tightens a credentials file found readable by others, and survives a corrupt one", () => {
    const store = new CredentialStore(fresh());
    store.save("http://a.test", creds("a"));
    chmodSync(store.path, 0o644);
    expect(store.get("http://a.test")!.accessToken).toBe("a");
    expect(mode(store.path)).toBe(0o600);
    writeFileSync(store.path, "{not json");
    expect(store.get("http://a.test")).toBeUndefined();
  });

  it("runs locked sections one at a time (two refreshes must not race)", async () => {
    const store = new CredentialStore(fresh());
    const order: string[] = [];
    const section = (name: string) =>
      store.withLock(async () => {
        order.push(`${name}:in`);
        await new Promise((r) => setTimeout(r, 150));
        order.push(`${name}:out`);
      });
    await Promise.all([section("a"), section("b")]);
    expect(order).toEqual(["a:in", "a:out", "b:in", "b:out"]);
    expect(existsSync(join(store.dir, "credentials.lock"))).toBe(false);
  });

  it("lives under KEYWARD_CONFIG_DIR when set, else the user's config directory", () => {
    expect(configDir({ KEYWARD_CONFIG_DIR: "/tmp/x" })).toBe("/tmp/x");
    expect(configDir({ XDG_CONFIG_HOME: "/home/u/.config" })).toMatch(/keyward$/);
  });
});

describe("server address", () => {
  it("normalizes addresses to one key and prefers the flag, then KEYWARD_SERVER, then the last login", () => {
    expect(normalizeServer("http://localhost:3000/")).toBe("http://localhost:3000");
    expect(normalizeServer("id.example.com")).toBe("https://id.example.com");
    expect(normalizeServer("https://example.com/keyward/")).toBe("https://example.com/keyward");
    expect(resolveServer("http://flag.test", { KEYWARD_SERVER: "http://env.test" }, "http://saved.test")).toBe("http://flag.test");
    expect(resolveServer(undefined, { KEYWARD_SERVER: "http://env.test" }, "http://saved.test")).toBe("http://env.test");
    expect(resolveServer(undefined, {}, "http://saved.test")).toBe("http://saved.test");
    expect(() => resolveServer(undefined, {}, undefined)).toThrow(/--server/);
    expect(() => normalizeServer("ftp://x")).toThrow(/http/);
  });
});
