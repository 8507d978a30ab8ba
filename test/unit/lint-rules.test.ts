import { existsSync, readdirSync, readFileSync, statSync } from "node:fs";
import { isBuiltin } from "node:module";
import { dirname, join, relative } from "node:path";
import { fileURLToPath, pathToFileURL } from "node:url";
import { ESLint } from "eslint";
import { beforeAll, describe, expect, it } from "vitest";

/**
 * The layering rules are enforced by eslint.config.js (run by `npm run lint` and .ci/run). The table
 * must name what exists (a rule about a renamed file passes vacuously), each planted violation below
 * must be reported with the project's own configuration, and each allowed counterpart must not, so
 * the rule neither sleeps nor cries wolf.
 */
const ROOT = fileURLToPath(new URL("../..", import.meta.url));

interface Boundary {
  files: string[];
  ignores?: string[];
  modules: string[];
  except?: string[];
  allowTypeImports?: string[];
  importNames?: string[];
  sameFolderOnly?: boolean;
  message: string;
}
const config = (await import(pathToFileURL(join(ROOT, "eslint.config.js")).href)) as { BOUNDARIES: Boundary[]; globRegex: (glob: string) => RegExp };
const { BOUNDARIES, globRegex } = config;

let eslint: ESLint;
beforeAll(async () => {
  eslint = new ESLint({ cwd: ROOT });
  // The first lint of a server file builds the typed project (tens of seconds on a busy machine):
  // once here, under its own time limit, instead of inside the first test's.
  await eslint.lintText("export {};\n", { filePath: "src/modules/users/planted.ts" });
}, 240_000);

async function problems(filePath: string, code: string): Promise<string[]> {
  const [result] = await eslint.lintText(`${code}\n`, { filePath });
  return result!.messages.map((m) => `${m.ruleId}: ${m.message}`);
}

// --- the table names what exists --------------------------------------------------------------------

const PROJECT_DIRS = ["src", "rest-shim", "schema"];
const projectFiles = PROJECT_DIRS.flatMap((dir) =>
  readdirSync(join(ROOT, dir), { recursive: true, encoding: "utf8" })
    .map((f) => `${dir}/${f.split("\\").join("/")}`)
    .filter((f) => statSync(join(ROOT, f)).isFile()),
);
/** What an import of a project file resolves to in the rule: its path without extension. */
const projectModules = projectFiles.map((f) => f.replace(/\.(?:[cm]?[jt]s|tsx?)$/, ""));

const pkg = JSON.parse(readFileSync(join(ROOT, "package.json"), "utf8")) as { dependencies: Record<string, string>; devDependencies: Record<string, string> };
const packageName = (specifier: string) => specifier.split("/").slice(0, specifier.startsWith("@") ? 2 : 1).join("/");
const isGlob = (p: string) => /[*?]/.test(p);
const isProjectPath = (p: string) => PROJECT_DIRS.includes(p.split("/")[0]!) || p.startsWith("**");

/** Every pattern of the table with where it sits: file patterns (importers) and module patterns (imports). */
const patterns = BOUNDARIES.flatMap((b, i) => {
  const where = `rule ${i} (${b.message.slice(0, 48)}…)`;
  return [
    ...[...b.files, ...(b.ignores ?? [])].map((p) => ({ where, p, kind: "file" as const })),
    ...[...b.modules, ...(b.except ?? []), ...(b.allowTypeImports ?? [])].map((p) => ({ where, p, kind: "module" as const })),
  ];
});

/** The privileged rules: one `<name>.secrets.repository` each, with the files allowed to read it. */
const privileged = BOUNDARIES.filter((b) => b.modules.length === 1 && /\.secrets\.repository$/.test(b.modules[0]!) && !isGlob(b.modules[0]!)).map((b) => ({
  module: b.modules[0]!,
  allowed: b.ignores ?? [],
}));
const secretsGlob = BOUNDARIES.find((b) => b.sameFolderOnly);

describe("the rule table (eslint.config.js) names what exists", () => {
  it("has privileged entries and the glob over every *.secrets.repository", () => {
    expect(privileged.length).toBeGreaterThan(0);
    expect(secretsGlob?.modules).toEqual(["src/modules/**/*.secrets.repository"]);
  });

  it.each(patterns.filter((x) => isProjectPath(x.p) && !isGlob(x.p)))("$where: $p exists", ({ p, kind }) => {
    // A module path resolves to a .ts file; an allowed or ignored file exists as written.
    expect(kind === "module" ? existsSync(join(ROOT, `${p}.ts`)) : existsSync(join(ROOT, p))).toBe(true);
  });

  it.each(patterns.filter((x) => isProjectPath(x.p) && isGlob(x.p)))("$where: $p matches a file", ({ p, kind }) => {
    const re = globRegex(p);
    expect((kind === "module" ? projectModules : projectFiles).some((f) => re.test(f))).toBe(true);
  });

  it.each(patterns.filter((x) => !isProjectPath(x.p)))("$where: the package $p is a dependency or built in", ({ p }) => {
    const name = packageName(p);
    expect(isBuiltin(name) || name in pkg.dependencies || name in pkg.devDependencies).toBe(true);
  });

  it.each(BOUNDARIES.filter((b) => b.importNames).flatMap((b) => b.importNames!.map((name) => ({ module: b.modules[0]!, name }))))(
    "$module exports $name",
    async ({ module, name }) => {
      const exported = (await import(pathToFileURL(join(ROOT, `${module}.ts`)).href)) as Record<string, unknown>;
      expect(Object.keys(exported)).toContain(name);
    },
  );

  it("gives every *.secrets.repository.ts its named readers", () => {
    const files = projectModules.filter((m) => m.startsWith("src/modules/") && m.endsWith(".secrets.repository"));
    expect(files.length).toBeGreaterThan(0);
    expect(files.sort()).toEqual(privileged.map((p) => p.module).sort());
  });
});

// --- each privileged rule reports a reader it does not name, and allows the ones it names ----------

const importAll = (from: string, module: string) => {
  const path = relative(dirname(from), module);
  return `import * as secrets from "${path.startsWith(".") ? path : `./${path}`}.js";\nexport const s = secrets;`;
};

describe("privileged repositories (rules 7, 15)", () => {
  it.each(privileged.map((p) => [p.module, p] as const))("%s: another service in its folder is refused", async (_m, { module }) => {
    const found = await problems(`${dirname(module)}/planted.service.ts`, importAll(`${dirname(module)}/planted.service.ts`, module));
    expect(found).toHaveLength(1);
    expect(found[0]).toMatch(/^keyward\/boundaries: .* are read by .* only \(ARCHITECTURE rule 7\)$/);
  });

  it.each(privileged.map((p) => [p.module, p] as const))("%s: a service of another module is refused", async (_m, { module }) => {
    const from = module.startsWith("src/modules/users/") ? "src/modules/orgs/planted.service.ts" : "src/modules/users/planted.service.ts";
    const found = await problems(from, importAll(from, module));
    expect(found).toHaveLength(1);
    expect(found[0]).toMatch(/\*\.secrets\.repository is privileged/);
  });

  it.each(privileged.flatMap((p) => p.allowed.map((file) => [file, p.module] as const)))("%s may read %s", async (file, module) => {
    expect(await problems(file, importAll(file, module))).toEqual([]);
  });
});

// --- the other rules, and realistic imports ---------------------------------------------------------

const planted: Array<[string, string, string, RegExp]> = [
  ["a service importing drizzle-orm", "src/modules/users/planted.service.ts", 'import { eq } from "drizzle-orm";\nexport const x = eq;', /only \*\.repository\.ts files/],
  ["a service importing a schema table", "src/modules/users/planted.service.ts", 'import { users } from "../../../schema/index.js";\nexport const x = users;', /only \*\.repository\.ts files/],
  ["src/modules importing express", "src/modules/users/planted.ts", 'import { Router } from "express";\nexport const r = Router();', /does not depend on a transport/],
  ["src/modules importing type-graphql", "src/modules/auth/planted.ts", 'import { Resolver } from "type-graphql";\nexport const r = Resolver;', /does not depend on a transport/],
  ["src/modules importing @apollo/server", "src/modules/auth/planted.ts", 'import { ApolloServer } from "@apollo/server";\nexport const a = ApolloServer;', /does not depend on a transport/],
  ["a non-adapter importing sshpk", "src/modules/ssh-keys/planted.ts", 'import sshpk from "sshpk";\nexport const k = sshpk;', /only src\/lib\/ssh\/ imports this library/],
  ["a non-adapter importing @simplewebauthn/server", "src/modules/auth/mfa/planted.ts", 'import { verifyRegistrationResponse } from "@simplewebauthn/server";\nexport const v = verifyRegistrationResponse;', /only src\/modules\/auth\/webauthn\//],
  ["a non-adapter importing xml-crypto", "src/modules/auth/planted.ts", 'import { SignedXml } from "xml-crypto";\nexport const s = SignedXml;', /only src\/lib\/saml\/ imports this library/],
  ["a module parsing XML with @xmldom/xmldom", "src/modules/orgs/planted.ts", 'import { DOMParser } from "@xmldom/xmldom";\nexport const p = DOMParser;', /only src\/lib\/saml\/ imports this library/],
  ["the SAML adapter importing node:crypto", "src/lib/saml/planted.ts", 'import { createVerify } from "node:crypto";\nexport const v = createVerify;', /only src\/lib\/crypto\/ .* import node:crypto/],
  ["a transport importing oidc-provider", "rest-shim/planted.ts", 'import Provider from "oidc-provider";\nexport const p = Provider;', /only src\/oidc\//],
  ["a non-email module importing nodemailer", "src/modules/contact/planted.ts", 'export const load = () => import("nodemailer");', /only src\/modules\/email\//],
  ["src/cli importing src/modules", "src/cli/commands/planted.ts", 'import { UsersService } from "../../modules/users/users.service.js";\nexport const u = UsersService;', /src\/cli imports nothing/],
  ["src/cli importing src/lib", "src/cli/planted.ts", 'import { AppError } from "../lib/errors.js";\nexport const e = AppError;', /src\/cli imports nothing/],
  ["a module importing node:crypto", "src/modules/networks/planted.service.ts", 'import { randomUUID } from "node:crypto";\nexport const id = randomUUID();', /only src\/lib\/crypto\/ .* import node:crypto/],
  ["a transport importing crypto", "rest-shim/planted.ts", 'import { createHash } from "crypto";\nexport const h = createHash;', /only src\/lib\/crypto\/ .* import node:crypto/],
  ["another auth service reading password hashes", "src/modules/auth/login.service.ts", 'import { credentialsSecretsRepository } from "./credentials.secrets.repository.js";\nexport const c = credentialsSecretsRepository;', /password hashes are read by/],
  ["an admin service reading TOTP seeds", "src/modules/admin/planted.service.ts", 'import { mfaSecretsRepository } from "../auth/mfa/mfa.secrets.repository.js";\nexport const m = mfaSecretsRepository;', /\*\.secrets\.repository is privileged/],
  ["a CA service reading the CA private key", "src/modules/ssh-ca/cas.service.ts", 'import { readCaPrivateKeyPrivileged } from "./ca.secrets.repository.js";\nexport const r = readCaPrivateKeyPrivileged;', /CA private keys are read by/],
  ["a type-only import of a secret reader", "src/modules/external-auth/external-auth.service.ts", 'import type { ProviderConfigWithSecret } from "./oauth-providers.secrets.repository.js";\nexport type P = ProviderConfigWithSecret;', /GitHub and Google client secrets are read by/],
  ["a repository beside it reading a secrets repository", "src/modules/email/outbox-stats.repository.ts", 'import { claimDueEmailsPrivileged } from "./outbox.secrets.repository.js";\nexport const c = claimDueEmailsPrivileged;', /\*\.secrets\.repository is privileged/],
  ["a transport reading a secrets repository", "rest-shim/planted.ts", 'import { readControllerConnectionPrivileged } from "../src/modules/networks/controller.secrets.repository.js";\nexport const r = readControllerConnectionPrivileged;', /\*\.secrets\.repository is privileged/],
  ["a module importing another module's repository", "src/modules/orgs/planted.service.ts", 'import { usersRepository } from "../users/users.repository.js";\nexport const u = usersRepository;', /used through its index\.ts only/],
  ["a type-only import of another module's service file", "src/modules/users/planted.service.ts", 'import type { AuditService } from "../audit/audit.service.js";\nexport type A = AuditService;', /used through its index\.ts only/],
  ["a transport importing a module's internals", "rest-shim/planted.ts", 'import { OrgErrors } from "../src/modules/orgs/orgs.errors.js";\nexport const e = OrgErrors;', /used through its index\.ts only/],
  ["a resolver importing a module's schemas file", "src/graphql/orgs/planted.ts", 'import { createOrgSchema } from "../../modules/orgs/orgs.schemas.js";\nexport const s = createOrgSchema;', /used through its index\.ts only/],
  ["a floating promise in the server", "src/modules/users/planted.service.ts", "export async function work(): Promise<void> {}\nexport function start(): void {\n  work();\n}", /no-floating-promises/],
  ["an async callback where a plain one is expected", "src/jobs/planted.ts", "export function start(): void {\n  setInterval(async () => {}, 1000);\n}", /no-misused-promises/],
];

const allowed: Array<[string, string, string]> = [
  ["a promise handed off on purpose", "src/modules/users/planted.service.ts", "export async function work(): Promise<void> {}\nexport function start(): void {\n  void work();\n  setInterval(() => void work(), 1000);\n}"],
  ["a repository importing drizzle-orm", "src/modules/users/planted.repository.ts", 'import { eq } from "drizzle-orm";\nexport const x = eq;'],
  ["a service importing a schema type", "src/modules/users/planted.service.ts", 'import type { users } from "../../../schema/index.js";\nexport type U = typeof users;'],
  ["the SSH adapter importing sshpk", "src/lib/ssh/planted.ts", 'import sshpk from "sshpk";\nexport const k = sshpk;'],
  ["the SAML adapter importing xml-crypto", "src/lib/saml/planted.ts", 'import { SignedXml } from "xml-crypto";\nexport const s = SignedXml;'],
  ["the email module importing mjml", "src/modules/email/planted.ts", 'import mjml from "mjml";\nexport const m = mjml;'],
  ["a test importing a protocol library", "test/unit/planted.test.ts", 'import { isoCBOR } from "@simplewebauthn/server/helpers";\nexport const c = isoCBOR;'],
  ["src/cli importing src/cli", "src/cli/commands/planted.ts", 'import { x } from "../output.js";\nexport const y = x;'],
  ["the crypto choke point importing node:crypto", "src/lib/crypto/planted.ts", 'import { randomUUID } from "node:crypto";\nexport const id = randomUUID();'],
  ["the SSH adapter importing node:crypto", "src/lib/ssh/planted.ts", 'import { createPublicKey } from "node:crypto";\nexport const k = createPublicKey;'],
  ["a module taking ids from src/lib/crypto", "src/modules/networks/planted.service.ts", 'import { uuid } from "../../lib/crypto/index.js";\nexport const id = uuid();'],
  ["the credentials service reading password hashes", "src/modules/auth/credentials.service.ts", 'import { credentialsSecretsRepository } from "./credentials.secrets.repository.js";\nexport const c = credentialsSecretsRepository;'],
  ["another auth service writing a password hash", "src/modules/auth/login.service.ts", 'import { credentialsRepository } from "./credentials.repository.js";\nexport const c = credentialsRepository;'],
  ["the MFA sign-in reading WebAuthn keys", "src/modules/auth/mfa/mfa-login.service.ts", 'import { mfaSecretsRepository } from "./mfa.secrets.repository.js";\nexport const m = mfaSecretsRepository;'],
  ["the signing service reading the CA private key", "src/modules/ssh-ca/signing.service.ts", 'import { readCaPrivateKeyPrivileged } from "./ca.secrets.repository.js";\nexport const r = readCaPrivateKeyPrivileged;'],
  ["a CA service reading CA metadata", "src/modules/ssh-ca/cas.service.ts", 'import { caRepository } from "./ca.repository.js";\nexport const r = caRepository;'],
  ["the outbox admin listing messages", "src/modules/email/outbox-admin.service.ts", 'import { outboxRepository } from "./outbox.repository.js";\nexport const o = outboxRepository;'],
  ["the API-key service looking a key up by its hash", "src/modules/api-keys/api-keys.service.ts", 'import { apiKeysPrivilegedRepository } from "./api-key-lookup.repository.js";\nexport const a = apiKeysPrivilegedRepository;'],
  ["a module importing another module's door", "src/modules/orgs/planted.service.ts", 'import { userAccounts } from "../users/index.js";\nexport const u = userAccounts;'],
  ["a transport importing a module's door", "rest-shim/planted.ts", 'import { OrgErrors } from "../src/modules/orgs/index.js";\nexport const e = OrgErrors;'],
  ["a service importing a repository of its own module's subfolder", "src/modules/auth/planted.service.ts", 'import { mfaRepository } from "./mfa/mfa.repository.js";\nexport const m = mfaRepository;'],
  ["a test importing a module's internals", "test/integration/planted.test.ts", 'import { usersRepository } from "../../src/modules/users/users.repository.js";\nexport const u = usersRepository;'],
  ["a test reading a secrets repository", "test/integration/planted.test.ts", 'import { readCaPrivateKeyPrivileged } from "../../src/modules/ssh-ca/ca.secrets.repository.js";\nexport const r = readCaPrivateKeyPrivileged;'],
];

describe("layering rules (eslint.config.js)", () => {
  it("plants against files that exist", () => {
    // A planted import of a file that does not exist proves nothing: each one names a real module.
    for (const [what, file, code] of [...planted, ...allowed]) {
      for (const [, source] of code.matchAll(/from "(\.[^"]+)"/g)) {
        const target = join(dirname(join(ROOT, file)), source!.replace(/\.js$/, ".ts"));
        expect(existsSync(target), `${what}: ${source}`).toBe(true);
      }
    }
  });

  it.each(planted)("reports %s", async (_what, file, code, message) => {
    const found = await problems(file, code);
    expect(found).toHaveLength(1);
    expect(found[0]).toMatch(/^(keyward\/boundaries|@typescript-eslint\/[a-z-]+): /);
    expect(found[0]).toMatch(message);
  });

  it.each(allowed)("allows %s", async (_what, file, code) => {
    expect(await problems(file, code)).toEqual([]);
  });
});
