import open from "open";
import type { Ctx } from "../context.js";
import { CliError, toFailure } from "../errors.js";
import { browserLogin } from "../login-browser.js";
import { deviceLogin } from "../login-device.js";
import { CLIENT_ID, discover, resourceMetadata, tokenFields } from "../oidc.js";
import type { Result } from "../output.js";
import { revokeAndForget } from "../session.js";
import { localTime } from "../time.js";

interface Me {
  user: { id: string; email: string; full_name?: string | null };
}

/** Opens the browser unless told not to; a machine without one still has the printed address. */
async function tryOpen(url: string): Promise<void> {
  try {
    const child = await open(url);
    child.on("error", () => {});
  } catch {
    /* no browser here: the address above is enough */
  }
}

export async function login(ctx: Ctx, opts: { device?: boolean; browser?: boolean }): Promise<Result> {
  const { io, server, store } = ctx;
  const meta = await resourceMetadata(server);
  const config = await discover(meta.issuer);
  const noBrowser = opts.browser === false || ctx.env.KEYWARD_NO_BROWSER === "1";
  // A new login replaces the old one, which is ended first rather than left live. Not afterwards:
  // the provider may give the new login the same grant, and revoking a token revokes its grant.
  if (store.get(server)) await revokeAndForget(store, server);
  const tokens = opts.device
    ? await deviceLogin(config, io, meta.resource)
    : await browserLogin(config, {
        resource: meta.resource,
        present: async (url) => {
          io.stderr(`Open this address in a browser to sign in to ${server}:\n\n  ${url}\n`);
          if (!noBrowser) await tryOpen(url);
          io.stderr("Waiting for the browser…");
        },
      });
  store.save(server, { issuer: meta.issuer, resource: meta.resource, clientId: CLIENT_ID, ...tokenFields(tokens) }, true);
  const { user } = await ctx.api.get<Me>("/auth/me");
  const creds = ctx.session.credentials();
  store.save(server, { ...creds, user: { id: user.id, email: user.email, name: user.full_name ?? null } });
  return {
    json: { server, user, scope: creds.scope.split(" "), expires_at: new Date(creds.expiresAt).toISOString() },
    text: [`${io.out.green("✓")} Signed in to ${server} as ${io.out.bold(user.email)}`],
  };
}

export async function whoami(ctx: Ctx): Promise<Result> {
  const { user } = await ctx.api.get<Me>("/auth/me");
  const creds = ctx.session.credentials();
  const c = ctx.io.out;
  return {
    json: { server: ctx.server, user, scope: creds.scope.split(" "), expires_at: new Date(creds.expiresAt).toISOString() },
    text: [
      `${c.bold(user.email)}${user.full_name ? ` (${user.full_name})` : ""}`,
      `${c.dim("server:")}  ${ctx.server}`,
      `${c.dim("scopes:")}  ${creds.scope}`,
      `${c.dim("token:")}   valid until ${localTime(new Date(creds.expiresAt))} (refreshed automatically)`,
    ],
  };
}

export async function logout(ctx: Ctx): Promise<Result> {
  if (!ctx.store.get(ctx.server)) return { json: { server: ctx.server, signed_out: false }, text: [`Not signed in to ${ctx.server}`] };
  const { revoked, error } = await revokeAndForget(ctx.store, ctx.server);
  if (!revoked) {
    const f = toFailure(error);
    throw new CliError(`Signed out here, but the server did not revoke the tokens: ${f.message}`, f.exitCode === 0 ? 1 : f.exitCode, "REVOCATION_FAILED");
  }
  return { json: { server: ctx.server, signed_out: true, revoked: true }, text: [`${ctx.io.out.green("✓")} Signed out of ${ctx.server} (tokens revoked)`] };
}
