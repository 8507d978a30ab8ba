import { fileURLToPath } from "node:url";
import { ESLint } from "eslint";
import { beforeAll, describe, expect, it } from "vitest";

/**
 * The layering rules are enforced by eslint.config.js (run by `npm run lint` and .ci/run): each
 * planted violation below must be reported with the project's own configuration, and each allowed
 * counterpart must not, so the rule neither sleeps nor cries wolf.
 */
const ROOT = fileURLToPath(new URL("../..", import.meta.url));
let eslint: ESLint;
beforeAll(() => {
  eslint = new ESLint({ cwd: ROOT });
});

async function problems(filePath: string, code: string): Promise<string[]> {
  const [result] = await eslint.lintText(`${code}\n`, { filePath });
  return result!.messages.map((m) => `${m.ruleId}: ${m.message}`);
}

const planted: Array<[string, string, string, RegExp]> = [
  ["a service importing drizzle-orm", "src/modules/users/planted.service.ts", 'import { eq } from "drizzle-orm";\nexport const x = eq;', /only \*\.repository\.ts files/],
  ["a service importing a schema table", "src/modules/users/planted.service.ts", 'import { users } from "../../../schema/index.js";\nexport const x = users;', /only \*\.repository\.ts files/],
  ["src/modules importing express", "src/modules/users/planted.ts", 'import { Router } from "express";\nexport const r = Router();', /does not depend on a transport/],
  ["src/modules importing type-graphql", "src/modules/auth/planted.ts", 'import { Resolver } from "type-graphql";\nexport const r = Resolver;', /does not depend on a transport/],
  ["src/modules importing @apollo/server", "src/modules/auth/planted.ts", 'import { ApolloServer } from "@apollo/server";\nexport const a = ApolloServer;', /does not depend on a transport/],
  ["a non-adapter importing sshpk", "src/modules/ssh-keys/planted.ts", 'import sshpk from "sshpk";\nexport const k = sshpk;', /only src\/lib\/ssh\/ imports this library/],
  ["a non-adapter importing @simplewebauthn/server", "src/modules/auth/mfa/planted.ts", 'import { verifyRegistrationResponse } from "@simplewebauthn/server";\nexport const v = verifyRegistrationResponse;', /only src\/modules\/auth\/webauthn\//],
  ["a transport importing oidc-provider", "rest-shim/planted.ts", 'import Provider from "oidc-provider";\nexport const p = Provider;', /only src\/oidc\//],
  ["a non-email module importing nodemailer", "src/modules/contact/planted.ts", 'export const load = () => import("nodemailer");', /only src\/modules\/email\//],
  ["src/cli importing src/modules", "src/cli/commands/planted.ts", 'import { UsersService } from "../../modules/users/users.service.js";\nexport const u = UsersService;', /src\/cli imports nothing/],
  ["src/cli importing src/lib", "src/cli/planted.ts", 'import { AppError } from "../lib/errors.js";\nexport const e = AppError;', /src\/cli imports nothing/],
  ["a service reading password hashes", "src/modules/users/planted.service.ts", 'import { credentialsRepository } from "../auth/credentials.repository.js";\nexport const c = credentialsRepository;', /password hashes are read by/],
  ["another auth service reading password hashes", "src/modules/auth/login.service.ts", 'import { credentialsRepository } from "./credentials.repository.js";\nexport const c = credentialsRepository;', /password hashes are read by/],
  ["an admin service reading TOTP seeds", "src/modules/admin/planted.service.ts", 'import { mfaSecretsRepository } from "../auth/mfa/mfa-secrets.repository.js";\nexport const m = mfaSecretsRepository;', /WebAuthn public keys and TOTP seeds/],
  ["a CA service reading the CA private key", "src/modules/ssh-ca/cas.service.ts", 'import { readSealedCaPrivateKey } from "./ca.repository.js";\nexport const r = readSealedCaPrivateKey;', /CA private keys are read by/],
  ["another module reading an API-key hash", "src/modules/orgs/planted.service.ts", 'import { apiKeySecrets } from "../api-keys/api-key-secrets.repository.js";\nexport const a = apiKeySecrets;', /\*-secrets\.repository is privileged/],
  ["a floating promise in the server", "src/modules/users/planted.service.ts", "export async function work(): Promise<void> {}\nexport function start(): void {\n  work();\n}", /no-floating-promises/],
  ["an async callback where a plain one is expected", "src/jobs/planted.ts", "export function start(): void {\n  setInterval(async () => {}, 1000);\n}", /no-misused-promises/],
];

const allowed: Array<[string, string, string]> = [
  ["a promise handed off on purpose", "src/modules/users/planted.service.ts", "export async function work(): Promise<void> {}\nexport function start(): void {\n  void work();\n  setInterval(() => void work(), 1000);\n}"],
  ["a repository importing drizzle-orm", "src/modules/users/planted.repository.ts", 'import { eq } from "drizzle-orm";\nexport const x = eq;'],
  ["a service importing a schema type", "src/modules/users/planted.service.ts", 'import type { users } from "../../../schema/index.js";\nexport type U = typeof users;'],
  ["the SSH adapter importing sshpk", "src/lib/ssh/planted.ts", 'import sshpk from "sshpk";\nexport const k = sshpk;'],
  ["the email module importing mjml", "src/modules/email/planted.ts", 'import mjml from "mjml";\nexport const m = mjml;'],
  ["a test importing a protocol library", "test/unit/planted.test.ts", 'import { isoCBOR } from "@simplewebauthn/server/helpers";\nexport const c = isoCBOR;'],
  ["src/cli importing src/cli", "src/cli/commands/planted.ts", 'import { x } from "../output.js";\nexport const y = x;'],
  ["the credentials service reading password hashes", "src/modules/auth/credentials.service.ts", 'import { credentialsRepository } from "./credentials.repository.js";\nexport const c = credentialsRepository;'],
  ["the MFA sign-in reading WebAuthn keys", "src/modules/auth/mfa/mfa-login.service.ts", 'import { mfaSecretsRepository } from "./mfa-secrets.repository.js";\nexport const m = mfaSecretsRepository;'],
  ["the signing service reading the CA private key", "src/modules/ssh-ca/signing.service.ts", 'import { caRepository, readSealedCaPrivateKey } from "./ca.repository.js";\nexport const r = [caRepository, readSealedCaPrivateKey];'],
  ["a CA service reading CA metadata", "src/modules/ssh-ca/cas.service.ts", 'import { caRepository } from "./ca.repository.js";\nexport const r = caRepository;'],
  ["the API-key service beside its secrets", "src/modules/api-keys/api-keys.service.ts", 'import { apiKeySecrets } from "./api-key-secrets.repository.js";\nexport const a = apiKeySecrets;'],
];

describe("layering rules (eslint.config.js)", () => {
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
