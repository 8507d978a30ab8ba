import { Command, InvalidArgumentError, Option, type OutputConfiguration } from "commander";

/** Every runnable command, by its words. */
export type CommandName =
  | "login" | "logout" | "whoami" | "orgs"
  | "keys add" | "keys list" | "keys rm"
  | "ssh sign" | "ssh status" | "ssh config" | "ssh ensure"
  | "networks list" | "networks activate" | "networks deactivate"
  | "request principal" | "request department" | "request role" | "request list"
  | "host enroll" | "host renew" | "host install-timer";

export type Opts = Record<string, any>;
/** What the parser hands over: the command, its positional arguments, its options. */
export type Runner = (command: CommandName, args: unknown[], opts: Opts) => Promise<void>;

declare const KEYWARD_VERSION: string | undefined;
export const VERSION = typeof KEYWARD_VERSION === "string" ? KEYWARD_VERSION : "dev";

const positiveInt = (v: string) => {
  const n = Number(v);
  if (!/^\d+$/.test(v) || !Number.isSafeInteger(n) || n <= 0) throw new InvalidArgumentError("must be a positive whole number");
  return n;
};
const collect = (v: string, prev: string[] = []) => [...prev, v];

const EXIT_CODES = `
Exit codes:
  0  success              3  not signed in, or the sign-in does not allow it
  1  error                4  several organizations: choose one with --org-id
  2  usage                5  server unreachable
Environment: KEYWARD_SERVER (server address), KEYWARD_CONFIG_DIR (credentials directory),
KEYWARD_NO_BROWSER=1 (print the sign-in address only), NO_COLOR.`;

/**
 * The command tree (commander). Parsing is kept apart from running: `run` receives the command and
 * its parsed arguments, so the grammar and --help are testable without a server.
 */
export function buildProgram(run: Runner, output?: OutputConfiguration): Command {
  const program = new Command("keyward")
    .configureOutput(output ?? {})
    .description("Keyward from the terminal: sign in, SSH certificates, network access")
    .version(VERSION, "-V, --version")
    .exitOverride()
    .showSuggestionAfterError(false)
    .addHelpText("after", EXIT_CODES);

  /** A command that runs: --json and --server on each one, so --help lists them where they apply. */
  const leaf = (parent: Command, name: string, description: string, command: CommandName, options: { server?: boolean; isDefault?: boolean } = {}) => {
    const cmd = parent.command(name, { isDefault: options.isDefault }).description(description).option("--json", "machine-readable output on stdout");
    if (options.server !== false) cmd.addOption(new Option("--server <url>", "Keyward server address (default: KEYWARD_SERVER, then the last login)"));
    return cmd.action(async (...a: unknown[]) => {
      const self = a.at(-1) as Command;
      await run(command, self.processedArgs, self.opts());
    });
  };

  leaf(program, "login", "sign in (in a browser on this computer, or with --device on another)", "login")
    .option("--device", "device flow: show a code to enter in a browser elsewhere")
    .option("--no-browser", "do not open a browser; print the address only");
  leaf(program, "logout", "revoke the saved tokens and forget them", "logout");
  leaf(program, "whoami", "show who you are signed in as", "whoami");
  leaf(program, "orgs", "list your organizations (the ids --org-id takes)", "orgs");

  const keys = program.command("keys").description("your registered SSH public keys");
  leaf(keys, "add", "register a public key and prove you hold its private key", "keys add")
    .argument("[path]", "key file (default: ~/.ssh/id_ed25519, id_ecdsa or id_rsa)")
    .option("--description <text>", "a note shown in key lists");
  leaf(keys, "list", "list your registered keys", "keys list");
  leaf(keys, "rm", "remove a registered key", "keys rm").argument("<key>", "key id, fingerprint or key file");

  const ssh = program.command("ssh").description("SSH certificates");
  leaf(ssh, "sign", "get a certificate for your key, written to <key>-cert.pub", "ssh sign")
    .option("--org-id <id>", "the organization to sign in (needed when you belong to several)")
    .option("--principal <name>", "request this principal (repeatable; default: all yours)", collect)
    .option("--hours <n>", "validity in hours (default: the organization's)", positiveInt)
    .option("--key <path>", "key file (default: ~/.ssh/id_ed25519, id_ecdsa or id_rsa)")
    .option("--list-orgs", "list your organizations and stop");
  leaf(ssh, "config", "write ~/.ssh/keyward/config and known_hosts: plain `ssh host` then uses and renews your certificate", "ssh config")
    .option("--org-id <id>", "an organization to cover (repeatable; needed when several can sign)", collect)
    .option("--all", "every organization that can sign")
    .option("--key <path>", "key file (default: ~/.ssh/id_ed25519, id_ecdsa or id_rsa)")
    .option("--print", "print the files instead of writing them")
    .option("--install", "add the Include line to the top of ~/.ssh/config (in a marked block)");
  leaf(ssh, "ensure", "renew the organization's certificate if missing or about to expire (run by ssh; always exits 0)", "ssh ensure")
    .requiredOption("--org-id <id>", "the organization")
    .option("--key <path>", "key file (default: ~/.ssh/id_ed25519, id_ecdsa or id_rsa)")
    .option("--margin-minutes <n>", "renew when fewer minutes are left (default: 10, or a fifth of the lifetime)", positiveInt)
    .option("--quiet", "print nothing unless it fails");
  leaf(ssh, "status", "validity left of the certificates on disk", "ssh status", { server: false }).argument("[certificates...]", "certificate files (default: ~/.ssh/*-cert.pub and those ssh sign wrote elsewhere)");

  const networks = program.command("networks").description("network access: your devices and time-boxed activations");
  leaf(networks, "list", "devices and access with time left (the default)", "networks list", { isDefault: true }).option("--org-id <id>", "only this organization");
  leaf(networks, "activate", "switch access on for a bounded time", "networks activate")
    .argument("[networks...]", "network names or membership ids")
    .option("--all", "every approved membership")
    .option("--minutes <n>", "how long (default: the network's)", positiveInt)
    .option("--org-id <id>", "only this organization");
  leaf(networks, "deactivate", "switch access off now", "networks deactivate")
    .argument("[networks...]", "network names or membership ids")
    .option("--all", "everything active")
    .option("--org-id <id>", "only this organization");

  const request = program.command("request").description("just-in-time access: ask for a principal, a department's grants or an organization role for a bounded time");
  leaf(request, "principal", "ask for a principal; approved, `ssh sign` includes it until the grant ends", "request principal")
    .argument("<name>", "the principal (e.g. deploy)")
    .requiredOption("--for <duration>", "how long: 30m, 2h, 1h30m, 1d")
    .requiredOption("--reason <text>", "why (the approvers read it; it is audited)")
    .option("--org-id <id>", "the organization (needed when you belong to several)");
  leaf(request, "department", "ask for a department's grants (its principals, as if a member); approved, `ssh sign` includes them until the grant ends", "request department")
    .argument("<name>", "the department (e.g. ops)")
    .requiredOption("--for <duration>", "how long: 30m, 2h, 1h30m, 1d")
    .requiredOption("--reason <text>", "why (the approvers read it; it is audited)")
    .option("--org-id <id>", "the organization (needed when you belong to several)");
  leaf(request, "role", "ask for an organization role above yours (admin); approved by an owner, you hold it until the grant ends", "request role")
    .argument("<role>", "the role (admin)")
    .requiredOption("--for <duration>", "how long: 30m, 2h, 1h30m, 1d")
    .requiredOption("--reason <text>", "why (the owners read it; it is audited)")
    .option("--org-id <id>", "the organization (needed when you belong to several)");
  leaf(request, "list", "your requests and grants, with time left (the default)", "request list", { isDefault: true });
  const host = program.command("host").description("this server: host certificates from the organization's host CA, trusted CA keys, KRL, renewal");
  const sshDirs = (cmd: Command) =>
    cmd
      .option("--dir <dir>", "the directory of the host keys (ssh_host_*_key.pub) and of the files written beside them", "/etc/ssh")
      .option("--sshd-config-dir <dir>", "where the sshd snippet 50-keyward.conf goes (default: <dir>/sshd_config.d)");
  sshDirs(leaf(host, "enroll", "send this server's host keys with a one-time token; write certificates, trust files, KRL and an sshd snippet", "host enroll"))
    .option("--token <token>", "the enrollment token (kwh_…; or KEYWARD_ENROLL_TOKEN)")
    .option("--names <a,b>", "the names to certify, comma-separated (default: all the token allows)")
    .option("--org-id <id>", "refuse a token of another organization")
    .option("--dry-run", "show what would be sent and written; send and write nothing");
  sshDirs(leaf(host, "renew", "renew the host certificates (proof: the host key) when due, refresh the KRL and trusted CA keys", "host renew"))
    .option("--force", "renew even before the renewal window (the last third of the lifetime)")
    .option("--on-renew <command>", "a shell command run after new certificates were written (reload sshd)");
  sshDirs(leaf(host, "install-timer", "write a systemd service and timer that run `keyward host renew` hourly with jitter", "host install-timer", { server: false }))
    .option("--unit-dir <dir>", "where the units go", "/etc/systemd/system")
    .option("--on-renew <command>", "the command the service runs after a renewal", "systemctl try-reload-or-restart ssh.service sshd.service");
  return program;
}
