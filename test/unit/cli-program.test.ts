import type { Command } from "commander";
import { describe, expect, it } from "vitest";
import { ExitCode, toFailure } from "../../src/cli/errors.js";
import { buildProgram, type CommandName, type Opts } from "../../src/cli/program.js";

/** Parses argv with a recording runner: the grammar and help, without a server. */
async function parse(argv: string[]) {
  const calls: Array<{ command: CommandName; args: unknown[]; opts: Opts }> = [];
  const out: string[] = [];
  const err: string[] = [];
  const program = buildProgram(async (command, args, opts) => void calls.push({ command, args, opts }), {
    writeOut: (s) => void out.push(s),
    writeErr: (s) => void err.push(s),
  });
  let exitCode: number = ExitCode.OK;
  try {
    await program.parseAsync(argv, { from: "user" });
  } catch (e) {
    exitCode = toFailure(e).exitCode;
  }
  return { calls, out: out.join(""), err: err.join(""), exitCode, program };
}

const leaves = (cmd: Command, prefix: string[] = []): string[][] =>
  cmd.commands.filter((c) => c.name() !== "help").flatMap((c) => (c.commands.length ? leaves(c, [...prefix, c.name()]) : [[...prefix, c.name()]]));

describe("keyward argument parsing", () => {
  it("hands ssh sign its repeatable principals, numeric hours, key and organization", async () => {
    const { calls, exitCode } = await parse(["ssh", "sign", "--org-id", "o1", "--principal", "root", "--principal", "deploy", "--hours", "8", "--key", "/k/id", "--json"]);
    expect(exitCode).toBe(0);
    expect(calls).toEqual([{ command: "ssh sign", args: [], opts: { orgId: "o1", principal: ["root", "deploy"], hours: 8, key: "/k/id", json: true } }]);
  });

  it("hands request department its name, duration, reason and organization; a missing reason is a usage error", async () => {
    const { calls, exitCode } = await parse(["request", "department", "ops", "--for", "2h", "--reason", "INC-7", "--org-id", "o1"]);
    expect(exitCode).toBe(0);
    expect(calls).toEqual([{ command: "request department", args: ["ops"], opts: { for: "2h", reason: "INC-7", orgId: "o1" } }]);
    const missing = await parse(["request", "department", "ops", "--for", "2h"]);
    expect([missing.calls.length, missing.exitCode]).toEqual([0, 2]);
  });

  it("hands request role its role, duration, reason and organization; a missing duration is a usage error", async () => {
    const { calls, exitCode } = await parse(["request", "role", "admin", "--for", "2h", "--reason", "INC-9", "--org-id", "o1"]);
    expect(exitCode).toBe(0);
    expect(calls).toEqual([{ command: "request role", args: ["admin"], opts: { for: "2h", reason: "INC-9", orgId: "o1" } }]);
    const missing = await parse(["request", "role", "admin", "--reason", "INC-9"]);
    expect([missing.calls.length, missing.exitCode]).toEqual([0, 2]);
  });

  it("reads --no-browser and --device on login, and --server on every server command", async () => {
    const { calls } = await parse(["login", "--no-browser", "--device", "--server", "https://id.example.com"]);
    expect(calls[0]).toEqual({ command: "login", args: [], opts: { browser: false, device: true, server: "https://id.example.com" } });
  });

  it("runs networks list when networks is given no subcommand, and passes positional lists", async () => {
    expect((await parse(["networks", "--org-id", "o2"])).calls[0]).toMatchObject({ command: "networks list", opts: { orgId: "o2" } });
    const activate = await parse(["networks", "activate", "prod", "dev", "--minutes", "30"]);
    expect(activate.calls[0]).toEqual({ command: "networks activate", args: [["prod", "dev"]], opts: { minutes: 30 } });
    expect((await parse(["keys", "add"])).calls[0]).toEqual({ command: "keys add", args: [undefined], opts: {} });
    expect((await parse(["ssh", "status", "a-cert.pub"])).calls[0]).toMatchObject({ command: "ssh status", args: [["a-cert.pub"]] });
  });

  it("exits 2 with one line for usage mistakes, and runs nothing", async () => {
    for (const argv of [["ssh", "sign", "--hours", "0"], ["ssh", "sign", "--hours", "eight"], ["keys", "rm"], ["bogus"], ["whoami", "--nope"], ["keys"]]) {
      const r = await parse(argv);
      expect(r.exitCode, argv.join(" ")).toBe(ExitCode.USAGE);
      expect(r.calls).toEqual([]);
      if (argv[0] !== "keys" || argv.length > 1) expect(r.err.trim().split("\n"), argv.join(" ")).toHaveLength(1);
    }
  });

  it("offers --help on every command and --json on every command that runs, with exit code 0", async () => {
    const { program } = await parse([]);
    const all = leaves(program);
    expect(all.map((l) => l.join(" ")).sort()).toEqual(
      [
        "host enroll", "host install-timer", "host renew", "keys add", "keys list", "keys rm", "login", "logout", "networks activate", "networks deactivate", "networks list", "orgs",
        "request department", "request list", "request principal", "request role", "ssh config", "ssh ensure", "ssh sign", "ssh status", "whoami",
      ].sort(),
    );
    for (const words of all) {
      const r = await parse([...words, "--help"]);
      expect(r.exitCode, words.join(" ")).toBe(0);
      expect(r.out, words.join(" ")).toContain("--json");
      if (!["ssh status", "host install-timer"].includes(words.join(" "))) expect(r.out, words.join(" ")).toContain("--server <url>");
    }
    const top = await parse(["--help"]);
    expect(top.exitCode).toBe(0);
    expect(top.out).toMatch(/Exit codes:[\s\S]*4\s+several organizations: choose one with --org-id/);
  });
});

describe("the client's boundary", () => {
  it("imports nothing server-side: only its own files, Node and npm packages", async () => {
    const { readdirSync, readFileSync } = await import("node:fs");
    const { join } = await import("node:path");
    const root = join(import.meta.dirname, "../../src/cli");
    const files = readdirSync(root, { recursive: true, encoding: "utf8" }).filter((f) => f.endsWith(".ts"));
    expect(files.length).toBeGreaterThan(10);
    for (const file of files) {
      const text = readFileSync(join(root, file), "utf8");
      for (const [, spec] of text.matchAll(/from "([^"]+)"/g)) {
        const inside = !spec!.startsWith(".") || !join(root, file, "..", spec!).replace(/\\/g, "/").match(/src\/(?!cli\/)/);
        expect(inside, `${file} imports ${spec}`).toBe(true);
      }
    }
  });
});
