// The layering rules of ARCHITECTURE.md (7, 8, 9, 15 and the house diagram), checked by a tool instead
// of by memory. One rule, `keyward/boundaries`, reads the table below: who may import what. Paths are
// relative to the project root; an import is matched on what it resolves to, so "../x.js" and
// "../../m/x.js" are judged alike. `npm run lint` runs it; .ci/run fails on a violation.
import { dirname, relative, resolve, sep } from "node:path";
import { fileURLToPath } from "node:url";
import { defineConfig } from "eslint/config";
import globals from "globals";
import reactHooks from "eslint-plugin-react-hooks";
import tseslint from "typescript-eslint";

const ROOT = dirname(fileURLToPath(import.meta.url));

/**
 * TEMPORARY (issue 16): files that still query the database outside a repository, each being fixed
 * in its own branch (orgs, api-keys, audit, email, contact, oidc-clients). Remove an entry when its
 * queries have moved; the list must end empty.
 */
const TEMPORARY_DATA_OVERRIDES = [];

/** Adapters: each protocol library is imported in one place only (rule 9). */
const adapter = (libraries, folder) => ({
  files: ["src/**", "rest-shim/**"],
  ignores: [`${folder}/**`],
  modules: libraries.flatMap((l) => [l, `${l}/**`]),
  message: `only ${folder}/ imports this library (ARCHITECTURE rule 9)`,
});

/**
 * Privileged repositories (credential reads, rules 7 and 15): every file that returns secret material
 * is a `<name>.secrets.repository.ts`. The glob entry below keeps each one inside its folder; an entry
 * per secret then names the services that may read it (and, with `importNames`, which of its exports).
 */
const privileged = (module, what, allowed, importNames) => ({
  files: ["src/**", "rest-shim/**"],
  ignores: allowed,
  modules: [module],
  importNames,
  message: `${what} are read by ${allowed.join(", ")} only (ARCHITECTURE rule 7)`,
});

export const BOUNDARIES = [
  {
    // Services own transactions and call repositories; only repositories build queries (rules 7, 15).
    files: ["src/modules/**"],
    ignores: ["src/modules/**/*.repository.ts", ...TEMPORARY_DATA_OVERRIDES],
    modules: ["drizzle-orm", "drizzle-orm/**", "schema/**"],
    allowTypeImports: ["schema/**"],
    message: "only *.repository.ts files in src/modules query the database: move the query into the aggregate's repository and pass `tx` (ARCHITECTURE rules 7, 15)",
  },
  {
    // A new secret gets a `<name>.secrets.repository.ts` of its own: only the services beside it
    // import it, until an entry below names which of them.
    files: ["src/**", "rest-shim/**"],
    modules: ["src/modules/**/*.secrets.repository"],
    sameFolderOnly: true,
    message: "a *.secrets.repository is privileged: only the services in its own folder import it (ARCHITECTURE rules 7, 15)",
  },
  privileged("src/modules/auth/credentials.secrets.repository", "password hashes", ["src/modules/auth/credentials.service.ts"]),
  privileged("src/modules/auth/mfa/mfa.secrets.repository", "WebAuthn public keys and TOTP seeds", [
    "src/modules/auth/mfa/mfa.service.ts",
    "src/modules/auth/mfa/mfa-login.service.ts",
  ]),
  privileged("src/modules/ssh-ca/ca.secrets.repository", "CA private keys", ["src/modules/ssh-ca/signing.service.ts"]),
  privileged("src/modules/keys/sealed-values.secrets.repository", "the ciphertexts of every sealed value", ["src/modules/keys/reseal.service.ts"]),
  privileged("src/modules/oidc-clients/oidc-clients.secrets.repository", "OIDC client secrets", ["src/modules/oidc-clients/oidc-clients.service.ts"]),
  privileged("src/modules/oidc-clients/signing-keys.secrets.repository", "OIDC private signing keys", ["src/modules/oidc-clients/signing-keys.service.ts"]),
  privileged("src/modules/audit/audit-keys.secrets.repository", "audit signing keys", ["src/modules/audit/chain-signer.service.ts"]),
  privileged("src/modules/networks/controller.secrets.repository", "controller API tokens", ["src/modules/networks/controller-config.service.ts"]),
  privileged("src/modules/external-auth/oauth-providers.secrets.repository", "GitHub and Google client secrets", ["src/modules/external-auth/oauth-providers.service.ts"]),
  privileged("src/modules/sso/sso-connections.secrets.repository", "SSO connections' client secrets and private keys", ["src/modules/sso/sso-sign-in.service.ts", "src/modules/sso/saml-sign-in.service.ts", "src/modules/sso/saml-logout.service.ts"]),
  privileged("src/modules/email/outbox.secrets.repository", "the outbox's sealed props (emailed links)", ["src/modules/email/email.service.ts"]),
  {
    // One crypto choke point (rule 8); the SSH adapter works on node:crypto key objects.
    files: ["src/**", "rest-shim/**"],
    ignores: ["src/lib/crypto/**", "src/lib/ssh/**"],
    modules: ["node:crypto", "crypto"],
    message: "only src/lib/crypto/ (and src/lib/ssh/) import node:crypto: add what you need there (ARCHITECTURE rule 8)",
  },
  adapter(["@simplewebauthn/server"], "src/modules/auth/webauthn"),
  adapter(["oidc-provider"], "src/oidc"),
  adapter(["sshpk"], "src/lib/ssh"),
  adapter(["mjml", "resend", "nodemailer"], "src/modules/email"),
  adapter(["xml-crypto", "@xmldom/xmldom"], "src/lib/saml"),
  {
    // The Public Suffix List decides what a domain claim may name: one reader of it.
    files: ["src/**", "rest-shim/**"],
    ignores: ["src/lib/domain-names.ts"],
    modules: ["tldts", "tldts/**"],
    message: "only src/lib/domain-names.ts imports tldts (ARCHITECTURE rule 9)",
  },
  {
    // Services know nothing of the doors (the house diagram, rule 1).
    files: ["src/modules/**"],
    modules: ["express", "express/**", "type-graphql", "type-graphql/**", "@apollo/server", "@apollo/server/**", "src/graphql/**", "src/oidc/**", "rest-shim/**"],
    message: "src/modules does not depend on a transport (express, GraphQL, the OIDC provider): the doors call the services, not the reverse",
  },
  {
    // The command-line client talks to Keyward over HTTP only; it is bundled on its own.
    files: ["src/cli/**"],
    modules: ["**"],
    projectOnly: true,
    except: ["src/cli/**"],
    message: "src/cli imports nothing from the rest of the project: it uses the REST API over HTTP",
  },
  {
    // A module's door is its index.ts: what it exports there (services, views, schemas, errors and
    // the few transaction-scoped reads and writes it offers) is its public face; repositories and
    // internals stay private, so a module can change them without breaking another (issue 34).
    files: ["src/**", "rest-shim/**"],
    modules: ["src/modules/*/**"],
    except: ["src/modules/*/index"],
    otherModuleOnly: true,
    message: "another module is used through its index.ts only: import from it, exporting there what others need (ARCHITECTURE rule 15)",
  },
];

// --- the rule -------------------------------------------------------------------------------------

/** A glob of the table as a regular expression over project paths (exported for test/unit/lint-rules.test.ts). */
export const globRegex = (glob) =>
  new RegExp(
    `^${glob
      .replace(/[.+^${}()|[\]\\]/g, "\\$&")
      .replace(/\*\*\//g, "\u0000")
      .replace(/\*\*/g, "\u0001")
      .replace(/\*/g, "[^/]*")
      .replace(/\u0000/g, "(?:.*/)?")
      .replace(/\u0001/g, ".*")}$`,
  );
const matcher = (globs = []) => {
  const res = globs.map(globRegex);
  return (path) => res.some((re) => re.test(path));
};
const toPosix = (p) => p.split(sep).join("/");
/** The module folder a project path lies in ("src/modules/orgs"), or null outside src/modules. */
const moduleOf = (p) => /^src\/modules\/[^/]+\//.exec(p)?.[0] ?? null;

/** What an import names: a project path without extension ("src/modules/x/y"), or the package specifier. */
function resolveImport(importer, source) {
  if (!source.startsWith(".")) return { id: source, project: false };
  const id = toPosix(relative(ROOT, resolve(dirname(importer), source))).replace(/\.(?:[cm]?[jt]s|tsx?)$/, "");
  return { id, project: true };
}

const compiled = BOUNDARIES.map((b) => ({
  ...b,
  inFiles: matcher(b.files),
  exempt: matcher(b.ignores),
  target: matcher(b.modules),
  excepted: matcher(b.except),
  typeOk: matcher(b.allowTypeImports),
}));

/** @type {import("eslint").Rule.RuleModule} */
const boundaries = {
  meta: { type: "problem", docs: { description: "Keyward's layering: who may import what (eslint.config.js)" }, schema: [] },
  create(context) {
    const file = toPosix(relative(ROOT, context.filename));
    const rules = compiled.filter((b) => b.inFiles(file) && !b.exempt(file));
    if (rules.length === 0) return {};
    /** @param {any} sourceNode @param {{ typeOnly: boolean, names: string[] | null }} what */
    const check = (sourceNode, what) => {
      if (!sourceNode || typeof sourceNode.value !== "string") return;
      const { id, project } = resolveImport(context.filename, sourceNode.value);
      for (const b of rules) {
        if (b.projectOnly && !project) continue;
        if (!b.target(id) || b.excepted(id)) continue;
        if (what.typeOnly && b.typeOk(id)) continue;
        if (b.sameFolderOnly && dirname(id) === dirname(file) && /\.service\.ts$/.test(file)) continue;
        if (b.otherModuleOnly && moduleOf(id) === moduleOf(file)) continue;
        // Restricted names only: other names from the same module are fine.
        if (b.importNames && what.names && !what.names.some((n) => b.importNames.includes(n))) continue;
        context.report({ node: sourceNode, message: `'${sourceNode.value}': ${b.message}` });
        return; // one problem per import: the first rule that refuses it says why
      }
    };
    // The names an import takes; null when it takes the whole module (default or namespace import).
    const named = (specifiers) =>
      specifiers.some((s) => s.type !== "ImportSpecifier" && s.type !== "ExportSpecifier")
        ? null
        : specifiers.map((s) => {
            const n = s.type === "ImportSpecifier" ? s.imported : s.local;
            return n.type === "Identifier" ? n.name : n.value;
          });
    return {
      ImportDeclaration(node) {
        const typeOnly = node.importKind === "type" || (node.specifiers.length > 0 && node.specifiers.every((s) => s.importKind === "type"));
        check(node.source, { typeOnly, names: named(node.specifiers) });
      },
      ExportNamedDeclaration(node) {
        if (node.source) check(node.source, { typeOnly: node.exportKind === "type", names: named(node.specifiers) });
      },
      ExportAllDeclaration(node) {
        check(node.source, { typeOnly: node.exportKind === "type", names: null });
      },
      ImportExpression(node) {
        if (node.source.type === "Literal") check(node.source, { typeOnly: false, names: null });
      },
    };
  },
};

export default defineConfig([
  { ignores: ["dist/**", "node_modules/**", "schema/migrations/**", "src/pages/assets/**", "web/src/graphql-env.d.ts"] },
  {
    files: ["**/*.ts"],
    languageOptions: { parser: tseslint.parser, sourceType: "module" },
    plugins: { keyward: { rules: { boundaries } } },
    rules: { "keyward/boundaries": "error" },
  },
  {
    // The server's own code: promises are awaited or handed off on purpose (a floating one loses its
    // error; an async callback where a plain one is expected runs unobserved), files stay readable.
    files: ["src/**/*.ts", "rest-shim/**/*.ts"],
    languageOptions: {
      parserOptions: {
        // The layering test (test/unit/lint-rules.test.ts) lints planted files that exist only in memory.
        projectService: {
          allowDefaultProject: ["src/*/planted*.ts", "src/*/*/planted*.ts", "src/*/*/*/planted*.ts", "rest-shim/planted*.ts"],
          maximumDefaultProjectFileMatchCount_THIS_WILL_SLOW_DOWN_LINTING: 64,
        },
        tsconfigRootDir: ROOT,
      },
    },
    plugins: { "@typescript-eslint": tseslint.plugin },
    rules: {
      "@typescript-eslint/no-floating-promises": "error",
      "@typescript-eslint/no-misused-promises": "error",
      "max-lines": ["error", { max: 300, skipBlankLines: true, skipComments: true }],
      complexity: ["warn", 20],
    },
  },
  {
    // The web app (rule 18): a client like any other, it talks to the server over /graphql only.
    files: ["web/src/**/*.{ts,tsx}"],
    extends: [tseslint.configs.recommended, reactHooks.configs.flat.recommended],
    languageOptions: { globals: globals.browser },
    rules: {
      "no-restricted-imports": [
        "error",
        { patterns: [{ group: ["**/src/modules/**", "**/src/graphql/**", "**/rest-shim/**", "express", "drizzle-orm", "**/schema/**"], message: "web/ talks to the server over /graphql only (ARCHITECTURE rule 18)" }] },
      ],
    },
  },
]);
