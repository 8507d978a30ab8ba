import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startTestApp, type TestApp } from "../helpers/app.js";
import { buildCli, cliUser, CliProcess, plain, runCli, startCli, startCliInPty, type CliUser } from "../helpers/cli.js";
import { OidcAgent } from "../helpers/oidc-agent.js";
import { newUser } from "../factories/users.js";

/**
 * The built `keyward` client's colours: only on a terminal, never with NO_COLOR, whatever TERM
 * says (cliUser sets TERM=xterm, a colour terminal). The device sign-in is the longest stderr a
 * person sees (address, code, spinner, result), approved here by a browser stand-in.
 */
let app: TestApp;

beforeAll(async () => {
  buildCli();
  app = await startTestApp({ RATE_LIMIT_ENABLED: "false" });
}, 120_000);
afterAll(() => app?.close());

/** Select Graphic Rendition: what sets colours and bold. Cursor moves (the spinner's) are not colour. */
const SGR = /\x1b\[[0-9;]*m/;

/** Approves the code a running `keyward login --device` shows, as its user in another browser. */
async function approveDevice(cli: CliProcess, person: { email: string; password: string }): Promise<void> {
  const [, verificationUri, code] = await cli.waitFor(/open (\S+) and enter the code (\S+)/);
  const agent = new OidcAgent(app.url);
  await agent.signIn(person.email, person.password);
  const input = await agent.follow(verificationUri!, "never");
  const entered = await agent.submitForm(verificationUri!, input.body, "op.deviceInputForm", { user_code: code! });
  const confirmed = await agent.submitForm(verificationUri!, await entered.text(), "op.deviceConfirmForm");
  await agent.follow(new URL(confirmed.headers.get("location")!, app.url).toString(), "never");
}

async function deviceLogin(u: CliUser, onTerminal: boolean) {
  const person = await newUser(app, { fullName: "Colour Person" });
  const cli = onTerminal ? startCliInPty(["login", "--device"], u) : startCli(["login", "--device"], u);
  await approveDevice(cli, person);
  return { person, done: await cli.done };
}

describe("colour", () => {
  it("writes none to a stderr that is no terminal, the device sign-in's spinner and result included", async () => {
    const { done } = await deviceLogin(cliUser(app.url), false);
    expect(done.code, done.stderr).toBe(0);
    expect(done.stderr).toContain("✓ Approved");
    expect(done.stderr).not.toMatch(SGR);
    expect(done.stdout).not.toMatch(SGR);
  }, 60_000);

  it("colours a terminal, and not with NO_COLOR set", async () => {
    const coloured = await deviceLogin(cliUser(app.url), true);
    expect(coloured.done.code, plain(coloured.done.stdout).slice(0, 2000)).toBe(0);
    expect(coloured.done.stdout).toMatch(SGR);
    // `script`'s terminal reports no width: the spinner prints its line once instead of erasing
    // lines upwards without end (ora divides by the width).
    expect(coloured.done.stdout.length).toBeLessThan(2000);

    const u = cliUser(app.url, { NO_COLOR: "1" });
    const plainRun = await deviceLogin(u, true);
    expect(plainRun.done.code, plainRun.done.stdout.slice(0, 2000)).toBe(0);
    expect(plain(plainRun.done.stdout)).toContain("Approved");
    expect(plainRun.done.stdout).not.toMatch(SGR);
    // An error on a terminal too: one plain line.
    const refused = startCliInPty(["keys", "rm", "no-such-key"], u);
    const failed = await refused.done;
    expect(failed.code).toBe(1);
    expect(failed.stdout).toContain("error: No registered key matches no-such-key");
    expect(failed.stdout).not.toMatch(SGR);
  }, 90_000);

  it("writes no colour into --json output or a piped error", async () => {
    const u = cliUser(app.url);
    const out = await runCli(["whoami", "--json"], u);
    expect(out.code).toBe(3);
    expect(out.stderr).toMatch(/^error: Not signed in/);
    expect(out.stderr + out.stdout).not.toMatch(SGR);
  });
});
