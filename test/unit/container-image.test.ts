import { existsSync, readFileSync } from "node:fs";
import { parse } from "yaml";
import { describe, expect, it } from "vitest";
import { ENV_SECTIONS } from "../../src/config/env.js";
import { execForm, readDockerfile } from "../helpers/dockerfile.js";

/**
 * The image and the compose file, checked as far as a machine without a container engine can:
 * the stages and what each copies, a non-root runtime that starts the compiled server and checks
 * its own readiness, and a compose file whose services wait for each other's health. The compiled
 * entry point and the image's health command are run for real in test/e2e/compiled-build.test.ts.
 */
const stages = readDockerfile();
const runtime = stages.at(-1)!;
const of = (op: string) => runtime.instructions.filter((i) => i.op === op);

describe("Dockerfile", () => {
  it("builds in stages from the lock file, on the Node.js line .nvmrc names", () => {
    expect(stages.map((s) => s.name)).toEqual(["deps", "build", "runtime"]);
    const major = readFileSync(".nvmrc", "utf8").trim();
    for (const s of stages) expect(s.from === "deps" || s.from.startsWith(`node:${major}-`)).toBe(true);
    expect(stages[0]!.instructions.find((i) => i.op === "RUN")!.args).toContain("npm ci");
    expect(stages[1]!.instructions.map((i) => i.args).join("\n")).toMatch(/npm run build && npm prune --omit=dev/);
  });

  it("copies only what exists, from earlier stages or from files the build context keeps", () => {
    const ignored = readFileSync(".dockerignore", "utf8").split("\n").filter(Boolean);
    stages.forEach((stage, index) => {
      for (const copy of stage.instructions.filter((i) => i.op === "COPY")) {
        const parts = copy.args.split(/\s+/);
        const from = parts.find((p) => p.startsWith("--from="))?.slice("--from=".length);
        const sources = parts.filter((p) => !p.startsWith("--")).slice(0, -1);
        if (from) {
          expect(stages.slice(0, index).map((s) => s.name)).toContain(from);
        } else {
          for (const src of sources) {
            expect(existsSync(src), src).toBe(true);
            expect(ignored.some((i) => src === i || src.startsWith(`${i}/`)), src).toBe(false);
          }
        }
      }
    });
  });

  it("runs the compiled server as a non-root user, with what it reads beside it and a readiness check", () => {
    expect(of("USER").map((u) => u.args)).toEqual(["node"]);
    expect(execForm(of("CMD")[0]!.args)).toEqual(["node", "--max-semi-space-size=16", "--heap-growing-percent=30", "dist/src/main.js"]);
    const copied = of("COPY").map((c) => c.args.split(/\s+/).at(-1));
    expect(copied).toEqual(expect.arrayContaining(["./node_modules", "./dist", "./schema/migrations", "./emails", "./src/pages/assets", "./package.json"]));
    for (const dir of ["schema/migrations", "emails", "src/pages/assets"]) expect(existsSync(dir)).toBe(true);
    expect(of("HEALTHCHECK")[0]!.args).toContain("/api/ready");
    expect(of("ENV")[0]!.args).toContain("NODE_ENV=production");
  });
});

describe("compose.yaml", () => {
  const compose = parse(readFileSync("compose.yaml", "utf8")) as {
    services: Record<string, { image?: string; build?: string; profiles?: string[]; ports?: string[]; volumes?: string[]; healthcheck?: { test: string[] }; depends_on?: Record<string, { condition: string }>; environment?: Record<string, string>; read_only?: boolean; cap_drop?: string[] }>;
  };
  /** What `docker compose up` starts: the services outside every profile. */
  const defaults = () => Object.keys(compose.services).filter((name) => !compose.services[name]!.profiles?.length);

  it("runs Keyward beside PostgreSQL and Redis, each with a health check, Keyward starting once both are healthy", () => {
    expect(defaults().sort()).toEqual(["keyward", "postgres", "redis"]);
    for (const s of Object.values(compose.services)) expect(s.healthcheck?.test.length).toBeGreaterThan(1);
    const keyward = compose.services.keyward!;
    expect(keyward.build).toBe(".");
    expect(keyward.depends_on).toEqual({ postgres: { condition: "service_healthy" }, redis: { condition: "service_healthy" } });
    expect(keyward.healthcheck!.test.join(" ")).toContain("/api/ready");
  });

  it("locks the container down and takes its secrets from the environment, never from the file", () => {
    const keyward = compose.services.keyward!;
    expect(keyward.read_only).toBe(true);
    expect(keyward.cap_drop).toEqual(["ALL"]);
    const env = keyward.environment!;
    expect(env.DATABASE_URL).toMatch(/@postgres:5432\//);
    expect(env.REDIS_URL).toBe("redis://redis:6379/0");
    expect(env.SESSION_SECRET).toMatch(/^\$\{SESSION_SECRET:\?/);
    expect(env.ENCRYPTION_KEYS).toMatch(/^\$\{ENCRYPTION_KEYS:\?/);
    const postgresEnv = (compose.services.postgres as { environment: Record<string, string> }).environment;
    expect(postgresEnv.POSTGRES_PASSWORD).toMatch(/^\$\{POSTGRES_PASSWORD:\?/);
  });

  it("passes every email setting through, each left unset when the environment does not set it", () => {
    const env = compose.services.keyward!.environment!;
    const email = ENV_SECTIONS.flatMap((section) => Object.keys(section.vars)).filter((name) => /^(SMTP_|EMAIL_FROM$|RESEND_API_KEY$|SENDGRID_API_KEY$)/.test(name));
    expect(email).toEqual(expect.arrayContaining(["SMTP_HOST", "SMTP_PORT", "SMTP_SECURE", "SMTP_REQUIRE_TLS", "SMTP_USERNAME", "SMTP_PASSWORD", "EMAIL_FROM"]));
    // An empty value means unset to Keyward (src/config), so its own defaults apply.
    for (const name of email) expect(env[name], name).toBe(`\${${name}:-}`);
  });

  it("offers a real ZeroTier controller under a profile of its own, its API on this computer's loopback only", () => {
    const zt = compose.services.zerotier!;
    expect(zt.profiles).toEqual(["zerotier"]);
    expect(zt.image).toMatch(/^zerotier\/zerotier:\d+\.\d+\.\d+$/);
    expect(zt.ports).toEqual(["127.0.0.1:${ZEROTIER_PORT:-9993}:9993"]);
    expect(zt.healthcheck!.test.length).toBeGreaterThan(1);
    // The API answers only the addresses local.conf allows: loopback and Docker's private networks.
    const mount = zt.volumes!.find((v) => v.endsWith(":/var/lib/zerotier-one/local.conf:ro"))!;
    const local = JSON.parse(readFileSync(mount.split(":")[0]!, "utf8")) as { settings: { allowManagementFrom: string[] } };
    expect(local.settings.allowManagementFrom).toEqual(expect.arrayContaining(["127.0.0.1/32", "172.16.0.0/12"]));
    for (const net of local.settings.allowManagementFrom) expect(net, net).toMatch(/^(127\.|::1\/|10\.0\.0\.0\/8$|172\.16\.0\.0\/12$|192\.168\.0\.0\/16$)/);
    expect(compose.services.keyward!.environment!.ZEROTIER_CONTROLLER_URLS).toBe("${ZEROTIER_CONTROLLER_URLS:-}");
  });
});

describe("what restarts Keyward (docs/operations.md)", () => {
  it("compose starts every service again when it ends, unless stopped by hand", () => {
    const compose = parse(readFileSync("compose.yaml", "utf8")) as { services: Record<string, { restart?: string }> };
    for (const [name, service] of Object.entries(compose.services)) expect(service.restart, name).toBe("unless-stopped");
  });

  it("the systemd unit runs what the image runs, restarts on failure without giving up, and not on a configuration error", () => {
    const unit = new Map<string, string[]>();
    for (const line of readFileSync("docs/keyward.service", "utf8").split("\n")) {
      const m = /^(\w+)=(.*)$/.exec(line.trim());
      if (m) unit.set(m[1]!, [...(unit.get(m[1]!) ?? []), m[2]!]);
    }
    const one = (key: string) => unit.get(key)?.at(-1);
    expect(one("Restart")).toBe("on-failure");
    expect(one("StartLimitIntervalSec")).toBe("0");
    // Exit 2 is a configuration error (src/main.ts); 75, a dependency not reachable at start, is retried.
    expect(one("RestartPreventExitStatus")?.split(/\s+/)).toEqual(["2"]);
    expect(one("User")).not.toBe("root");
    const cmd = execForm(of("CMD")[0]!.args);
    expect(one("ExecStart")).toBe(`/usr/bin/node ${cmd.slice(1).join(" ")}`);
    expect(one("KillSignal")).toBe("SIGTERM");
  });
});
