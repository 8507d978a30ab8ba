import { chromium, type Browser, type Page } from "playwright-core";

/** Debian's Chromium, headless, with the flags that keep it off the network. */
export function launchBrowser(): Promise<Browser> {
  return chromium.launch({
    executablePath: "/usr/bin/chromium",
    headless: true,
    timeout: 30_000,
    args: ["--headless", "--no-sandbox", "--disable-gpu", "--disable-background-networking", "--disable-component-update", "--disable-sync"],
  });
}

/**
 * A page with a CDP virtual authenticator (CTAP2, resident keys, user verification, auto presence),
 * in a context of its own (axe-core's AxeBuilder refuses pages from browser.newPage()).
 */
export async function pageWithAuthenticator(browser: Browser): Promise<Page> {
  const page = await (await browser.newContext()).newPage();
  const cdp = await page.context().newCDPSession(page);
  await cdp.send("WebAuthn.enable", { enableUI: false });
  await cdp.send("WebAuthn.addVirtualAuthenticator", {
    options: { protocol: "ctap2", transport: "internal", hasResidentKey: true, hasUserVerification: true, isUserVerified: true, automaticPresenceSimulation: true },
  });
  return page;
}
