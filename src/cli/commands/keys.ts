import { existsSync } from "node:fs";
import { hostname } from "node:os";
import type { Ctx } from "../context.js";
import { CliError, ExitCode } from "../errors.js";
import { findKey, sameKey, type LocalKey } from "../local-keys.js";
import type { Result } from "../output.js";
import { signChallenge } from "../ssh-keygen.js";

export interface ServerKey {
  id: string;
  fingerprint: string;
  key_type: string;
  /** A FIDO2 security key (sk-); its proof's flags: touched, PIN/biometric (null until proved). */
  hardware_backed?: boolean;
  sk_user_presence?: boolean | null;
  sk_user_verification?: boolean | null;
  description: string | null;
  public_key: string;
  verified: boolean;
  created_at: string;
}

const listKeys = async (ctx: Ctx) => (await ctx.api.get<{ keys: ServerKey[] }>("/ssh/keys")).keys;

/**
 * Makes sure the server holds `key` as a verified key of this user: registers it if needed, then
 * proves possession by signing the server's challenge with the private key (ssh-keygen -Y sign).
 * The server never sees the private key; a stolen public key alone cannot be registered.
 */
export async function ensureVerifiedKey(ctx: Ctx, key: LocalKey, description?: string): Promise<{ key: ServerKey; added: boolean; proved: boolean }> {
  let known = (await listKeys(ctx)).find((k) => sameKey(k.public_key, key.publicLine));
  const added = !known;
  if (!known) {
    const line = key.comment ? `${key.publicLine} ${key.comment}` : key.publicLine;
    // The key's own comment names it (the server takes it when no description is sent), as it
    // does in authorized_keys and `ssh-add -l`; only a key without one is named after this host.
    const named = description ?? (key.comment ? undefined : `keyward on ${hostname()}`);
    known = await ctx.api.post<ServerKey>("/ssh/keys", { key: line, ...(named === undefined ? {} : { description: named }) });
  }
  if (known.verified) return { key: known, added, proved: false };
  // ssh-keygen asks for the touch (and PIN) itself, on the terminal.
  if (known.hardware_backed) ctx.io.stderr("Proving possession: touch your security key when it blinks.");
  const challenge = await ctx.api.get<{ challenge_text: string }>(`/ssh/keys/${known.id}/verify`);
  const signature = signChallenge(key.privatePath, challenge.challenge_text);
  const verified = await ctx.api.post<{ verified: boolean; key: ServerKey }>(`/ssh/keys/${known.id}/verify`, { signature });
  return { key: verified.key, added, proved: true };
}

/** What a security key's proof showed: a touch, a PIN/biometric check. */
const skProof = (k: ServerKey) =>
  k.sk_user_presence == null ? "" : `, proved ${k.sk_user_presence ? "with a touch" : "without a touch"}${k.sk_user_verification ? " and a PIN/biometric" : ""}`;

export async function keysAdd(ctx: Ctx, path: string | undefined, opts: { description?: string }): Promise<Result> {
  const local = findKey(path);
  const { key, added, proved } = await ensureVerifiedKey(ctx, local, opts.description);
  const c = ctx.io.out;
  return {
    json: { key, added, proved },
    text: [
      `${c.green("✓")} ${added ? "Added" : "Already registered:"} ${key.fingerprint} (${local.publicPath})${proved ? ", possession proved" : ""}`,
      `  id: ${key.id}`,
      `  type: ${key.key_type}${key.hardware_backed ? ` (hardware security key${skProof(key)})` : ""}`,
    ],
  };
}

export async function keysList(ctx: Ctx): Promise<Result> {
  const keys = await listKeys(ctx);
  const c = ctx.io.out;
  return {
    json: { keys, count: keys.length },
    text: keys.length
      ? keys.map(
          (k) =>
            `${k.id}  ${k.key_type.padEnd(11)} ${k.fingerprint}  ${k.verified ? c.green("verified") : c.yellow("unverified")}${k.hardware_backed ? `  hardware${skProof(k)}` : ""}${k.description ? `  ${c.dim(k.description)}` : ""}`,
        )
      : ["No SSH keys registered: add one with `keyward keys add`"],
  };
}

/** An id, a fingerprint, or the path of a key file. */
export async function keysRemove(ctx: Ctx, ref: string): Promise<Result> {
  const keys = await listKeys(ctx);
  const local = existsSync(ref) || existsSync(`${ref}.pub`) ? findKey(ref).publicLine : null;
  const key = keys.find((k) => k.id === ref || k.fingerprint === ref || (local !== null && sameKey(k.public_key, local)));
  if (!key) throw new CliError(`No registered key matches ${ref} (see \`keyward keys list\`)`, ExitCode.ERROR, "SSH_KEY_NOT_FOUND");
  await ctx.api.delete(`/ssh/keys/${key.id}`);
  return { json: { id: key.id, fingerprint: key.fingerprint, deleted: true }, text: [`${ctx.io.out.green("✓")} Removed ${key.fingerprint} (${key.id})`] };
}
