import { existsSync, readFileSync } from "node:fs";
import { join } from "node:path";
import express, { Router, type Request, type Response } from "express";
import type { Container } from "../container.js";
import { resolvePageContext } from "../http/context.js";
import { projectPath } from "../infra/paths.js";

/**
 * The web app (web/, built into dist/web by `npm install` and `npm run build`): its files under
 * /_app/ (named by content, so cached for a year), and its index.html at each of its addresses.
 * A signed-out visit goes to sign-in first and comes back; the app itself reads and writes
 * through /graphql only.
 */
export const WEB_DIR = projectPath("dist/web");

/**
 * The app's own CSP: scripts and styles from this origin only. react-aria adds two constant <style>
 * elements (press handling, and scroll locking on iOS); their exact texts are allowed by hash, so a
 * library upgrade that changes them shows as a violation in the browser tests.
 */
const REACT_ARIA_STYLE_HASHES = ["'sha256-38RhXrc7EdReTKsOm23ZPOCUgniTUUcjky8QOOrQx6o='", "'sha256-gYiS/BvZvRcK27JIXTuwhZ3hs2+VJ1X+2gUlE+farlg='"];
export const APP_CSP =
  `default-src 'self'; script-src 'self'; style-src 'self' ${REACT_ARIA_STYLE_HASHES.join(" ")}; ` +
  "img-src 'self' data:; connect-src 'self'; form-action 'self'; frame-ancestors 'none'; base-uri 'none'; object-src 'none'";

/**
 * The app's addresses besides `/` (which shows it to a signed-in person: flows.ts). Express 5
 * wildcards. `/account/security` keeps working for the links older emails carry.
 */
export const APP_ROUTES = ["/orgs{/*rest}", "/account{/*rest}", "/admin{/*rest}"];

export interface WebApp {
  router: Router;
  /** Answers with the app's page (the caller has checked who is asking). */
  send(res: Response): void;
}

export function createWebApp(container: Container): WebApp {
  const { services } = container;
  const index = join(WEB_DIR, "index.html");
  // Read once: the build does not change under a running server.
  const html = existsSync(index) ? readFileSync(index, "utf8") : null;
  const send = (res: Response) => {
    res.setHeader("Cache-Control", "no-cache");
    if (!html) {
      res.status(503).type("text/plain").send("The web app is not built: run `npm run build:web` (npm install and npm run build do it).");
      return;
    }
    res.setHeader("Content-Security-Policy", APP_CSP);
    res.type("html").send(html);
  };
  const router = Router();
  router.use("/_app", express.static(join(WEB_DIR, "_app"), { immutable: true, maxAge: "1y", index: false, fallthrough: false }));
  router.get(APP_ROUTES, async (req: Request, res: Response) => {
    await resolvePageContext(services.actors, req);
    if (req.ctx?.actor.kind !== "user") return res.redirect(303, `/login?next=${encodeURIComponent(req.originalUrl)}`);
    send(res);
  });
  return { router, send };
}
