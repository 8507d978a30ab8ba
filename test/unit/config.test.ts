import { describe, expect, it } from "vitest";
import { ConfigError, loadConfig } from "../../src/config/index.js";

describe("configuration", () => {
  it("starts with defaults on a laptop and warns about development secrets", () => {
    const config = loadConfig({});
    expect(config.db.url).toBeUndefined();
    expect(config.db.dataDir).toBe("./data");
    expect(config.redis.url).toBeUndefined();
    expect(config.session.cookieName).toBe("keyward.sid");
    expect(config.session.secureCookie).toBe(false);
    expect(config.warnings.join(" ")).toContain("SESSION_SECRET");
    expect(Object.isFrozen(config.session)).toBe(true);
  });

  it("fails fast naming every bad variable at once", () => {
    try {
      loadConfig({ PORT: "eighty", LOG_LEVEL: "loud", RATE_LIMIT_LOGIN_IP: "lots", PUBLIC_URL: "not a url" });
      expect.unreachable();
    } catch (e) {
      expect(e).toBeInstanceOf(ConfigError);
      const message = (e as Error).message;
      for (const name of ["PORT", "LOG_LEVEL", "RATE_LIMIT_LOGIN_IP", "PUBLIC_URL"]) expect(message).toContain(name);
    }
  });

  it("lists the problems of single variables and of their combinations together, in one pass", () => {
    const problems = (env: Record<string, string>): string[] => {
      try {
        loadConfig(env);
      } catch (e) {
        expect(e).toBeInstanceOf(ConfigError);
        return (e as ConfigError).problems;
      }
      return expect.unreachable();
    };
    // NODE_ENV and LOG_LEVEL fail their own parse; SESSION_SECRET's length is a check on the whole.
    const three = problems({ NODE_ENV: "prod", LOG_LEVEL: "verbose", SESSION_SECRET: "short" });
    expect(three).toHaveLength(3);
    expect(three.join("\n")).toMatch(/^NODE_ENV: [\s\S]*^LOG_LEVEL: [\s\S]*^SESSION_SECRET: the current secret must be at least 32 characters/m);
    // A check across variables does not speak of one already refused (its default stood in for it).
    const timeouts = problems({ HTTP_HEADERS_TIMEOUT: "soon", HTTP_REQUEST_TIMEOUT: "5", METRICS_TOKEN: "short" });
    expect(timeouts.filter((p) => p.includes("HTTP_HEADERS_TIMEOUT"))).toHaveLength(1);
    expect(timeouts.some((p) => p.startsWith("METRICS_TOKEN"))).toBe(true);
  });

  it("refuses a PUBLIC_URL (or any URL setting) without its http(s) scheme, and a DATABASE_URL that is not PostgreSQL", () => {
    for (const value of ["localhost:8080", "id.example.com", "ftp://id.example.com"]) {
      expect(() => loadConfig({ PUBLIC_URL: value }), value).toThrow(/PUBLIC_URL: must be an http:\/\/ or https:\/\/ URL/);
    }
    expect(() => loadConfig({ APP_URL: "app.example.com" })).toThrow(/APP_URL: must be an http/);
    expect(loadConfig({ PUBLIC_URL: "https://id.example.com" }).oidc.issuer).toBe("https://id.example.com");
    for (const value of ["mysql://k:pw@db/keyward", "sqlite:///data/keyward.db", "db.example.com:5432/keyward", "redis://db:6379"]) {
      expect(() => loadConfig({ DATABASE_URL: value }), value).toThrow(/DATABASE_URL: must be a PostgreSQL URL/);
    }
    for (const value of ["postgres://k:pw@db:5432/keyward", "postgresql://db/keyward", "postgres://k@localhost/keyward?host=/run/postgresql"]) {
      expect(loadConfig({ DATABASE_URL: value }).db.url).toBe(value);
    }
  });

  it("takes DNS servers for domain verification as IP addresses with optional ports, and refuses anything else", () => {
    expect(loadConfig({}).domains.resolvers).toEqual([]);
    expect(loadConfig({ DNS_RESOLVER: "127.0.0.1:5353, 10.0.0.53,[::1]:53,::1" }).domains.resolvers).toEqual(["127.0.0.1:5353", "10.0.0.53", "[::1]:53", "::1"]);
    for (const value of ["dns.example.com", "127.0.0.1:0", "127.0.0.1:70000", "udp://1.1.1.1", "1.1.1"]) {
      expect(() => loadConfig({ DNS_RESOLVER: value }), value).toThrow(/DNS_RESOLVER: .* is not an IP address/);
    }
    const d = loadConfig({ DOMAIN_RECHECK_INTERVAL: "3600", DOMAIN_LAPSE_AFTER: "5", RATE_LIMIT_DOMAIN_VERIFY: "5/60" }).domains;
    expect(d).toMatchObject({ recheckIntervalMs: 3_600_000, lapseAfter: 5, verifyRate: { points: 5, duration: 60 } });
  });

  it("warns that production without PUBLIC_URL tells relying parties and links to go to localhost", () => {
    const secrets = { NODE_ENV: "production", SESSION_SECRET: "s".repeat(40), ENCRYPTION_KEYS: `k1:${Buffer.alloc(32).toString("base64")}` };
    const bare = loadConfig(secrets);
    expect(bare.oidc.issuer).toBe("http://localhost:8080");
    expect(bare.warnings.join("\n")).toContain("PUBLIC_URL is not set: the OpenID issuer, cookies and emailed links fall back to http://localhost:8080");
    expect(loadConfig({ ...secrets, PUBLIC_URL: "https://id.example.com" }).warnings.join("\n")).not.toContain("PUBLIC_URL");
    // Development on a laptop is what the fallback is for.
    expect(loadConfig({}).warnings.join("\n")).not.toContain("PUBLIC_URL");
  });

  it("listens on this machine only on the embedded default (development secrets), on every interface with DATABASE_URL, as HOST says otherwise", () => {
    expect(loadConfig({}).http.host).toBe("127.0.0.1");
    expect(loadConfig({}).metrics.host).toBe("127.0.0.1");
    expect(loadConfig({ DATABASE_URL: "postgres://db/keyward" }).http.host).toBe("0.0.0.0");
    expect(loadConfig({ HOST: "0.0.0.0" }).http.host).toBe("0.0.0.0");
    expect(loadConfig({ HOST: "::1", DATABASE_URL: "postgres://db/keyward" }).http.host).toBe("::1");
  });

  it("refuses production without secrets", () => {
    expect(() => loadConfig({ NODE_ENV: "production" })).toThrow(/SESSION_SECRET[\s\S]*ENCRYPTION_KEYS/);
  });

  it("uses a Secure __Host- cookie and HSTS over https", () => {
    const config = loadConfig({
      NODE_ENV: "production",
      PUBLIC_URL: "https://id.example.com",
      SESSION_SECRET: "s".repeat(40),
      ENCRYPTION_KEYS: `k1:${Buffer.alloc(32).toString("base64")}`,
    });
    expect(config.session.cookieName).toBe("__Host-keyward.sid");
    expect(config.session.secureCookie).toBe(true);
    expect(config.http.https).toBe(true);
  });

  it("refuses a plain-http PUBLIC_URL in production, except on loopback", () => {
    const secrets = { NODE_ENV: "production", SESSION_SECRET: "s".repeat(40), ENCRYPTION_KEYS: `k1:${Buffer.alloc(32).toString("base64")}` };
    expect(() => loadConfig({ ...secrets, PUBLIC_URL: "http://id.example.com" })).toThrow(/PUBLIC_URL must be https in production/);
    expect(loadConfig({ ...secrets, PUBLIC_URL: "http://127.0.0.1:8080" }).http.https).toBe(false);
    expect(loadConfig({ ...secrets, PUBLIC_URL: "http://localhost:8080" }).session.secureCookie).toBe(false);
  });

  it("rejects malformed encryption keys and treats empty variables as unset", () => {
    expect(() => loadConfig({ ENCRYPTION_KEYS: "k1:short" })).toThrow(/ENCRYPTION_KEYS/);
    expect(loadConfig({ DATABASE_URL: "", REDIS_URL: "" }).db.url).toBeUndefined();
  });

  it("parses rate rules and lists", () => {
    const config = loadConfig({ RATE_LIMIT_RESEND_VERIFICATION: "5/600", CORS_ORIGINS: "https://a.test, https://*.b.test", SUPERADMIN_EMAILS: "Ops@Example.com" });
    expect(config.rateLimits.resendVerification).toEqual({ points: 5, duration: 600 });
    expect(config.cors.origins).toEqual(["https://a.test", "https://*.b.test"]);
    expect(config.superadminEmails).toEqual(["ops@example.com"]);
  });

  it("bounds how long a client may take to send a request, in seconds, headers within the whole", () => {
    expect(loadConfig({}).http.timeouts).toEqual({ headersMs: 20_000, requestMs: 60_000, keepAliveMs: 5_000 });
    expect(loadConfig({ HTTP_HEADERS_TIMEOUT: "5", HTTP_REQUEST_TIMEOUT: "30", HTTP_KEEP_ALIVE_TIMEOUT: "65" }).http.timeouts).toEqual({ headersMs: 5_000, requestMs: 30_000, keepAliveMs: 65_000 });
    expect(() => loadConfig({ HTTP_HEADERS_TIMEOUT: "90" })).toThrow(/HTTP_HEADERS_TIMEOUT must not be longer than HTTP_REQUEST_TIMEOUT/);
    expect(() => loadConfig({ HTTP_REQUEST_TIMEOUT: "0" })).toThrow(/HTTP_REQUEST_TIMEOUT/);
  });
});
