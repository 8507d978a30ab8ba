import { existsSync, readFileSync } from "node:fs";
import { posix } from "node:path";
import ts from "typescript";
import { parse } from "yaml";
import { describe, expect, it } from "vitest";
import { healthRoutes } from "../../rest-shim/routes/health.routes.js";
import { ENV_SECTIONS } from "../../src/config/env.js";
import type { Services } from "../../src/container.js";
import { execForm, readDockerfile, type Stage } from "../helpers/dockerfile.js";

/**
 * The image and the compose file, checked as far as a machine without a container engine can, by
 * what must hold rather than how it is spelled (stage names, flag order, `./dist` or `dist/`):
 * every base image is the Node.js line .nvmrc names or an earlier stage; dependencies come from the
 * lock file; the runtime stage gets no development dependencies, runs as a non-root user with
 * NODE_ENV=production, has what the compiled server reads, starts the compiled src/main.ts with
 * node, and checks its health on the readiness route. The compiled entry point and the image's
 * health command are run for real in test/e2e/compiled-build.test.ts.
 */
const stages = readDockerfile();
const runtime = stages.at(-1)!;
const of = (op: string, stage = runtime) => stage.instructions.filter((i) => i.op === op);

/** A stage and the stages it is built FROM, oldest first. */
function lineage(stage: Stage): Stage[] {
  const parent = stages.find((s) => s.name === stage.from && stages.indexOf(s) < stages.indexOf(stage));
  return parent ? [...lineage(parent), stage] : [stage];
}

/** The npm commands stages run, in order: `npm ci --omit=dev` → ["ci", "--omit=dev"]. */
const npmRuns = (list: Stage[]): string[][] =>
  list
    .flatMap((s) => of("RUN", s))
    .flatMap((run) => run.args.split(/&&|\|\||;/))
    .map((command) => command.trim().split(/\s+/))
    .filter((words) => words[0] === "npm")
    .map((words) => words.slice(1));
/** What a stage, with the stages it is built from, runs of npm. */
const npmCommands = (stage: Stage) => npmRuns(lineage(stage));

const omitsDev = (args: string[]) => args.includes("--omit=dev") || args.includes("--production") || args.join(" ").includes("--omit dev");
const installs = (args: string[]) => ["ci", "install", "i", "prune"].includes(args[0]!);

/** The runtime stage's working directory, and where each of its COPYs lands relative to it. */
const workdir = of("WORKDIR").at(-1)?.args ?? "/";
const copies = of("COPY").map((copy) => {
  const parts = copy.args.split(/\s+/);
  const dest = posix.relative(workdir, posix.resolve(workdir, parts.at(-1)!)) || ".";
  const from = parts.find((p) => p.startsWith("--from="))?.slice("--from=".length);
  return { dest, from: stages.find((s) => s.name === from) };
});

/** What the container runs: ENTRYPOINT and CMD together (a shell form runs under /bin/sh -c). */
const form = (args: string) => (args.trimStart().startsWith("[") ? execForm(args) : ["/bin/sh", "-c", args]);
const command = [...(of("ENTRYPOINT").at(-1) ? form(of("ENTRYPOINT").at(-1)!.args) : []), ...(of("CMD").at(-1) ? form(of("CMD").at(-1)!.args) : [])];

/** The JavaScript tsc makes of src/main.ts (tsconfig's outDir and rootDir). */
function compiledMain(): string {
  const { config } = ts.readConfigFile("tsconfig.json", (f) => ts.sys.readFile(f)) as { config: { compilerOptions: { outDir: string; rootDir: string } } };
  const { outDir, rootDir } = config.compilerOptions;
  return posix.normalize(posix.join(outDir, posix.relative(rootDir, "src/main.ts"))).replace(/\.ts$/, ".js");
}

/** The readiness route as the server mounts it: /api + the health router's readiness path (src/server.ts). */
const readinessPath = `/api${healthRoutes({} as Services).find((r) => r.summary.startsWith("Readiness"))!.path}`;
/** The URL paths a health command requests: after a quote (`'/api/ready'`) or a port (`:8080/api/ready`). */
const pathsIn = (healthCommand: string) => [...healthCommand.matchAll(/(?:['"]|:\d+)(\/[a-z][\w-]*(?:\/[\w-]+)*)/gi)].map((m) => m[1]);

/** The value ENV gives a variable in a stage (`ENV A=1 B=2` or the legacy `ENV A 1`). */
function envOf(name: string, stage = runtime): string | undefined {
  let value: string | undefined;
  for (const env of of("ENV", stage)) {
    const legacy = /^(\w+)\s+([^=]*)$/.exec(env.args);
    if (legacy) {
      if (legacy[1] === name) value = legacy[2]!.trim();
      continue;
    }
    for (const m of env.args.matchAll(/(\w+)=("[^"]*"|'[^']*'|\S+)/g)) if (m[1] === name) value = m[2]!.replace(/^["']|["']$/g, "");
  }
  return value;
}

describe("Dockerfile", () => {
  it("builds in stages from the lock file, on the Node.js line .nvmrc names", () => {
    expect(stages.length).toBeGreaterThan(1);
    const major = readFileSync(".nvmrc", "utf8").trim();
    stages.forEach((s, index) => {
      const earlier = stages.slice(0, index).map((e) => e.name);
      expect(earlier.includes(s.from) || new RegExp(`^node:${major}([.-]|$|@)`).test(s.from), s.from).toBe(true);
    });
    // Dependencies are installed as the lock file pins them (npm ci), never resolved anew (npm install).
    const all = npmRuns(stages);
    expect(all.some((c) => c[0] === "ci")).toBe(true);
    expect(all.filter((c) => c[0] === "install" || c[0] === "i")).toEqual([]);
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

  it("ships no development dependencies: the runtime's node_modules were pruned after the last install", () => {
    // The runtime starts from a clean Node.js image, not from a stage holding the sources and the build's tools.
    expect(stages.map((s) => s.name)).not.toContain(runtime.from);
    const modules = copies.filter((c) => c.dest === "node_modules");
    expect(modules).toHaveLength(1);
    expect(modules[0]!.from, "node_modules come from a build stage").toBeDefined();
    const changes = npmCommands(modules[0]!.from!).filter(installs);
    expect(changes.length).toBeGreaterThan(0);
    expect(omitsDev(changes.at(-1)!), changes.at(-1)!.join(" ")).toBe(true);
    // Nor does the runtime stage install anything of its own with them.
    for (const c of npmRuns([runtime]).filter(installs)) expect(omitsDev(c), c.join(" ")).toBe(true);
  });

  it("runs as a non-root user, in production mode, with what the compiled server reads beside it", () => {
    const user = of("USER").at(-1)?.args.split(":")[0];
    expect(user, "the runtime stage sets a USER").toBeDefined();
    expect(["root", "0"]).not.toContain(user);
    expect(envOf("NODE_ENV")).toBe("production");
    const dests = copies.map((c) => c.dest);
    expect(dests).toEqual(expect.arrayContaining(["node_modules", "dist", "schema/migrations", "emails", "src/pages/assets", "package.json"]));
    for (const dir of ["schema/migrations", "emails", "src/pages/assets"]) expect(existsSync(dir)).toBe(true);
    // The compiled code comes out of a stage that built it.
    const dist = copies.find((c) => c.dest === "dist")!;
    expect(npmCommands(dist.from!).some((c) => c[0] === "run" && c[1] === "build")).toBe(true);
  });

  it("starts the compiled server with node, and checks its health on the readiness route", () => {
    expect(posix.basename(command[0]!)).toBe("node");
    const script = command.slice(1).find((arg) => !arg.startsWith("-"));
    expect(script && posix.normalize(script)).toBe(compiledMain());
    const health = of("HEALTHCHECK").at(-1)!;
    expect(health.args).not.toMatch(/^NONE\b/i);
    expect(pathsIn(health.args)).toEqual([readinessPath]);
  });
});

describe("compose.yaml", () => {
  type RawService = Omit<Service, "environment" | "healthcheck"> & { environment?: Record<string, string> | string[]; healthcheck?: { test: string | string[] } };
  interface Service {
    image?: string; build?: string; profiles?: string[]; ports?: string[]; volumes?: string[]; healthcheck?: { test: string[] };
    depends_on?: Record<string, { condition: string }>; environment?: Record<string, string>; read_only?: boolean; cap_drop?: string[];
  }
  const raw = parse(readFileSync("compose.yaml", "utf8")) as { services: Record<string, RawService> };
  // Either spelling compose accepts: `environment:` as a map or as KEY=value lines; `test:` as a list or a shell string.
  const compose = {
    services: Object.fromEntries(
      Object.entries(raw.services).map(([name, s]): [string, Service] => [
        name,
        {
          ...s,
          environment: Array.isArray(s.environment) ? Object.fromEntries(s.environment.map((line) => [line.slice(0, line.indexOf("=")), line.slice(line.indexOf("=") + 1)])) : s.environment,
          healthcheck: s.healthcheck && { test: typeof s.healthcheck.test === "string" ? ["CMD-SHELL", s.healthcheck.test] : s.healthcheck.test },
        },
      ]),
    ),
  };
  /** What `docker compose up` starts: the services outside every profile. */
  const defaults = () => Object.keys(compose.services).filter((name) => !compose.services[name]!.profiles?.length);

  it("runs Keyward beside PostgreSQL and Redis, each with a health check, Keyward starting once both are healthy", () => {
    expect(defaults().sort()).toEqual(["keyward", "postgres", "redis"]);
    for (const s of Object.values(compose.services)) expect(s.healthcheck?.test.length).toBeGreaterThan(1);
    const keyward = compose.services.keyward!;
    expect(keyward.build).toBe(".");
    expect(keyward.depends_on).toMatchObject({ postgres: { condition: "service_healthy" }, redis: { condition: "service_healthy" } });
    expect(pathsIn(keyward.healthcheck!.test.join(" "))).toEqual([readinessPath]);
  });

  it("locks the container down and takes its secrets from the environment, never from the file", () => {
    const keyward = compose.services.keyward!;
    expect(keyward.read_only).toBe(true);
    expect(keyward.cap_drop?.map((c) => c.toUpperCase())).toContain("ALL");
    const env = keyward.environment!;
    // The database and Redis of this file, by their service names.
    expect(env.DATABASE_URL).toMatch(/^postgres(ql)?:\/\/[^@]+@postgres(:5432)?\//);
    expect(env.REDIS_URL).toMatch(/^rediss?:\/\/([^@]*@)?redis(:6379)?(\/\d+)?$/);
    // `${NAME:?message}` (or `${NAME?message}`): compose refuses to start without them.
    expect(env.SESSION_SECRET).toMatch(/^\$\{SESSION_SECRET:?\?/);
    expect(env.ENCRYPTION_KEYS).toMatch(/^\$\{ENCRYPTION_KEYS:?\?/);
    expect(compose.services.postgres!.environment!.POSTGRES_PASSWORD).toMatch(/^\$\{POSTGRES_PASSWORD:?\?/);
  });

  it("passes every email setting through, each left unset when the environment does not set it", () => {
    const env = compose.services.keyward!.environment!;
    const email = ENV_SECTIONS.flatMap((section) => Object.keys(section.vars)).filter((name) => /^(SMTP_|EMAIL_FROM$|RESEND_API_KEY$|SENDGRID_API_KEY$)/.test(name));
    expect(email).toEqual(expect.arrayContaining(["SMTP_HOST", "SMTP_PORT", "SMTP_SECURE", "SMTP_REQUIRE_TLS", "SMTP_USERNAME", "SMTP_PASSWORD", "EMAIL_FROM"]));
    // An empty value means unset to Keyward (src/config), so its own defaults apply.
    for (const name of email) expect(env[name], name).toMatch(new RegExp(`^\\$\\{${name}:?-\\}$`));
  });

  it("offers a real ZeroTier controller under a profile of its own, its API on this computer's loopback only", () => {
    const zt = compose.services.zerotier!;
    expect(zt.profiles).toEqual(["zerotier"]);
    expect(zt.image).toMatch(/^zerotier\/zerotier:\d+\.\d+\.\d+$/);
    expect(zt.ports?.length).toBeGreaterThan(0);
    for (const port of zt.ports!) expect(port, port).toMatch(/^127\.0\.0\.1:.+:9993$/);
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
    const [program, ...args] = one("ExecStart")!.split(/\s+/);
    expect(posix.basename(program!)).toBe(posix.basename(command[0]!));
    expect(args).toEqual(command.slice(1));
    expect(one("KillSignal")).toBe("SIGTERM");
  });
});
