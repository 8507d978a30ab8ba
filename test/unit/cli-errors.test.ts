import { CommanderError } from "commander";
import { describe, expect, it } from "vitest";
import { ApiError, CliError, ExitCode, toFailure } from "../../src/cli/errors.js";
import { ambiguousCandidates, chooseOrg, orgChoiceNeeded } from "../../src/cli/org-choice.js";
import { colorsFor, type Io } from "../../src/cli/output.js";

const networkError = (code: string) => Object.assign(new TypeError("fetch failed"), { cause: Object.assign(new Error(`connect ${code}`), { code }) });

describe("error to exit code", () => {
  it("maps refusals, sign-in problems, organization choice and network failures to their codes", () => {
    const cases: Array<[unknown, number, string]> = [
      [new ApiError(401, "INVALID_TOKEN", "Token expired"), ExitCode.AUTH, "INVALID_TOKEN"],
      [new ApiError(403, "INSUFFICIENT_SCOPE", "This token lacks ssh:sign", { required: "ssh:sign" }), ExitCode.AUTH, "INSUFFICIENT_SCOPE"],
      [new ApiError(400, "MULTIPLE_ORGS_AMBIGUOUS", "several"), ExitCode.ORG_CHOICE, "MULTIPLE_ORGS_AMBIGUOUS"],
      [new ApiError(404, "SSH_KEY_NOT_FOUND", "SSH key not found"), ExitCode.ERROR, "SSH_KEY_NOT_FOUND"],
      [new ApiError(500, "INTERNAL_ERROR", "Internal error"), ExitCode.ERROR, "INTERNAL_ERROR"],
      [networkError("ECONNREFUSED"), ExitCode.UNREACHABLE, "UNREACHABLE"],
      [new TypeError("fetch failed", { cause: new Error("bad port") }), ExitCode.UNREACHABLE, "UNREACHABLE"],
      [Object.assign(new Error("timed out"), { name: "TimeoutError" }), ExitCode.UNREACHABLE, "UNREACHABLE"],
      [Object.assign(new Error("server responded with an error"), { error: "access_denied" }), ExitCode.AUTH, "ACCESS_DENIED"],
      [Object.assign(new Error("x"), { error: "expired_token" }), ExitCode.AUTH, "EXPIRED_TOKEN"],
      [Object.assign(new Error("x"), { error: "invalid_grant" }), ExitCode.AUTH, "INVALID_GRANT"],
      [new CommanderError(1, "commander.unknownOption", "error: unknown option '--x'"), ExitCode.USAGE, "USAGE"],
      [new CommanderError(0, "commander.helpDisplayed", "(outputHelp)"), ExitCode.OK, "USAGE"],
      [Object.assign(new Error("User force closed the prompt"), { name: "ExitPromptError" }), ExitCode.INTERRUPTED, "INTERRUPTED"],
      [new CliError("No server", ExitCode.USAGE, "USAGE"), ExitCode.USAGE, "USAGE"],
      [new Error("boom\n    at somewhere (file.ts:1:1)"), ExitCode.ERROR, "ERROR"],
    ];
    for (const [error, code, type] of cases) {
      const f = toFailure(error);
      expect([f.exitCode, f.type], String(error)).toEqual([code, type]);
      // One line, never a stack trace.
      expect(f.message).not.toContain("\n");
      expect(f.message).not.toMatch(/\bat .*:\d+:\d+/);
    }
  });

  it("tells the user what to do about sign-in failures", () => {
    expect(toFailure(new ApiError(401, "INVALID_TOKEN", "Token expired")).message).toContain("keyward login");
    expect(toFailure(new ApiError(403, "INSUFFICIENT_SCOPE", "Needs ssh:sign")).message).toContain("keyward login");
    expect(toFailure(networkError("ENOTFOUND")).message).toContain("ENOTFOUND");
  });
});

describe("organization choice without a terminal", () => {
  const orgs = [
    { id: "11111111-1111-4111-8111-111111111111", name: "Acme" },
    { id: "22222222-2222-4222-8222-222222222222", name: "Globex" },
  ];
  const io: Io = { json: false, out: colorsFor({}), err: colorsFor({}), stdout: () => {}, stderr: () => {}, interactive: false };

  it("reads the candidates from the server's MULTIPLE_ORGS_AMBIGUOUS details", () => {
    expect(ambiguousCandidates(new ApiError(400, "MULTIPLE_ORGS_AMBIGUOUS", "x", { organizations: orgs }))).toEqual(orgs);
    expect(ambiguousCandidates(new ApiError(400, "VALIDATION_ERROR", "x"))).toBeNull();
  });

  it("exits 4 naming --org-id and every candidate instead of prompting", async () => {
    const error = await chooseOrg(io, orgs).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(CliError);
    const f = toFailure(error);
    expect(f.exitCode).toBe(ExitCode.ORG_CHOICE);
    expect(f.message).toContain("--org-id");
    for (const o of orgs) expect(f.message).toContain(`${o.id} (${o.name})`);
    expect(orgChoiceNeeded(orgs).details).toEqual({ organizations: orgs });
  });
});

describe("colours", () => {
  it("colours a terminal only, and never under NO_COLOR or TERM=dumb", () => {
    expect(colorsFor({ isTTY: true }, {}).isColorSupported).toBe(true);
    expect(colorsFor({ isTTY: false }, {}).isColorSupported).toBe(false);
    expect(colorsFor({ isTTY: true }, { NO_COLOR: "1" }).isColorSupported).toBe(false);
    expect(colorsFor({ isTTY: true }, { TERM: "dumb" }).isColorSupported).toBe(false);
    expect(colorsFor({ isTTY: false }, {}).red("x")).toBe("x");
  });
});
