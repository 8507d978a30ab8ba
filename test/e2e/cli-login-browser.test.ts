import { createServer, type Server } from "node:http";
import type { Browser } from "playwright-core";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startTestApp, type TestApp } from "../helpers/app.js";
import { launchBrowser } from "../helpers/browser.js";
import { newUser } from "../factories/users.js";

/**
 * The original CLI's login, end to end: it listens on a loopback port and opens
 * /api/v1/token_please?redirect_url=http://127.0.0.1:<port>/?token= in a browser; the user signs in
 * on the hosted page and confirms; the browser brings the CLI a token that /auth/me accepts.
 */
let app: TestApp;
let browser: Browser;
let cli: Server;
let cliUrl: string;
const received: string[] = [];

beforeAll(async () => {
  app = await startTestApp({ RATE_LIMIT_ENABLED: "false" });
  browser = await launchBrowser();
  cli = createServer((req, res) => {
    // Only the hand-over counts (the browser also asks for /favicon.ico).
    const url = new URL(req.url!, "http://127.0.0.1");
    if (url.pathname === "/") received.push(url.searchParams.get("token") ?? "");
    res.end("You can close this window.");
  });
  await new Promise<void>((resolve) => cli.listen(0, "127.0.0.1", resolve));
  cliUrl = `http://127.0.0.1:${(cli.address() as { port: number }).port}/?token=`;
});
afterAll(async () => {
  cli?.close();
  await browser?.close();
  await app?.close();
});

describe("command-line sign-in in Chromium", () => {
  it("signs in, asks for confirmation, and hands the CLI its token at its loopback address", async () => {
    const user = await newUser(app);
    const page = await (await browser.newContext()).newPage();
    // Exactly as the original CLI opens it: the redirect URL unencoded in the query.
    await page.goto(`${app.url}/api/v1/token_please?redirect_url=${cliUrl}`);
    await page.waitForURL(/\/login\?next=%2Fcli%2Fauthorize/);
    await page.fill("#email", user.email);
    await page.click("#login-form button[type=submit]");
    await page.fill("#password", user.password);
    await page.click("#login-form button[type=submit]");
    await page.waitForURL(/\/cli\/authorize\?cli_token=/);
    expect(await page.textContent("#cli-target")).toBe(cliUrl.replace("?token=", ""));
    await page.click("#cli-allow");
    await page.waitForURL(`${cliUrl}**`);
    expect(received).toHaveLength(1);
    const me = await app.http.get("/api/v1/auth/me", { headers: { authorization: `bearer ${received[0]}` } });
    expect(me.body.data.user.email).toBe(user.email);
    await page.context().close();
  });
});
