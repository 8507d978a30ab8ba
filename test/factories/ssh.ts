import { execFileSync } from "node:child_process";
import { generateKeyPairSync } from "node:crypto";
import { mkdtempSync, readFileSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { SshReader, SshWriter } from "../../src/lib/ssh/wire.js";
import type { TestApp } from "../helpers/app.js";
import type { TestUser } from "./users.js";

const dir = mkdtempSync(join(tmpdir(), "kw-ssh-keys-"));
let seq = 0;

export interface LocalKey {
  path: string;
  pub: string;
}

/** A real key pair made by ssh-keygen. */
export function makeKey(type: "ed25519" | "ecdsa" | "rsa" = "ed25519"): LocalKey {
  const path = join(dir, `id_${type}_${seq++}`);
  execFileSync("ssh-keygen", ["-q", "-t", type, ...(type === "rsa" ? ["-b", "2048"] : []), "-N", "", "-C", `test-${seq}`, "-f", path]);
  return { path, pub: readFileSync(`${path}.pub`, "utf8").trim() };
}

/** Registers a key and proves possession the way the CLI does (ssh-keygen -Y sign -n file). */
export async function addVerifiedKey(app: TestApp, user: TestUser, key: LocalKey = makeKey()): Promise<{ id: string; key: LocalKey }> {
  const added = await app.http.post("/api/v1/ssh/keys", { key: key.pub, description: "laptop" }, { token: user.token });
  if (added.status !== 201 && added.status !== 200) throw new Error(`add key failed: ${added.status} ${added.text}`);
  const id = added.body.data.id as string;
  const signature = await answerChallenge(app, user, id, key);
  const verified = await app.http.post(`/api/v1/ssh/keys/${id}/verify`, { signature }, { token: user.token });
  if (verified.status !== 200) throw new Error(`verify failed: ${verified.status} ${verified.text}`);
  return { id, key };
}

/** Asks for the key's challenge and signs it as the CLI does (ssh-keygen -Y sign -n file): the signature to post. */
export async function answerChallenge(app: TestApp, user: TestUser, keyId: string, key: LocalKey): Promise<string> {
  const challenge = await app.http.get(`/api/v1/ssh/keys/${keyId}/verify`, { token: user.token });
  const file = join(dir, `challenge-${seq++}.txt`);
  writeFileSync(file, challenge.body.data.challenge_text + "\n");
  execFileSync("ssh-keygen", ["-Y", "sign", "-n", "file", "-f", key.path, file], { stdio: "ignore" });
  return Buffer.from(readFileSync(`${file}.sig`)).toString("base64");
}

export async function createCa(app: TestApp, orgId: string, admin: TestUser, body: Record<string, unknown> = {}) {
  const res = await app.http.post(`/api/v1/organizations/${orgId}/cas`, { name: "User CA", ...body }, { token: admin.token });
  if (res.status !== 201) throw new Error(`create CA failed: ${res.status} ${res.text}`);
  return res.body.data.ca as { id: string; public_key: string; fingerprint: string; ca_type: string };
}

/** Grants a principal to a member directly. */
export async function grantPrincipal(app: TestApp, orgId: string, admin: TestUser, member: TestUser, name: string) {
  const base = `/api/v1/organizations/${orgId}/principals`;
  let principal = (await app.http.get(base, { token: admin.token })).body.data.principals.find((p: { name: string }) => p.name === name);
  if (!principal) principal = (await app.http.post(base, { name }, { token: admin.token })).body.data.principal;
  await app.http.post(`${base}/${principal.id}/members`, { email: member.email }, { token: admin.token });
  return principal.id as string;
}

export const keysDir = dir;

/**
 * Public keys that parse as OpenSSH keys but cannot be sound (issue 12 item 14), built from real
 * keys with one field broken: each must be refused at registration and at signing.
 */
export function malformedKeys(): Record<string, string> {
  const b64u = (s: string) => Buffer.from(s, "base64url");
  const line = (blob: Buffer) => `${new SshReader(blob).text()} ${blob.toString("base64")} broken`;
  const rsa = generateKeyPairSync("rsa", { modulusLength: 2048 }).publicKey.export({ format: "jwk" });
  const n = b64u(rsa.n!);
  const rsaKey = (e: Buffer, mod: Buffer) => line(new SshWriter().string("ssh-rsa").mpint(e).mpint(mod).toBuffer());
  const evenN = Buffer.from(n);
  evenN[evenN.length - 1]! &= 0xfe;
  const ec = generateKeyPairSync("ec", { namedCurve: "P-256" }).publicKey.export({ format: "jwk" });
  const y = b64u(ec.y!);
  y[31]! ^= 1;
  const ecKey = (q: Buffer) => line(new SshWriter().string("ecdsa-sha2-nistp256").string("nistp256").string(q).toBuffer());
  const ed = b64u(generateKeyPairSync("ed25519").publicKey.export({ format: "jwk" }).x!);
  return {
    "RSA e=1": rsaKey(Buffer.from([1]), n),
    "RSA even e": rsaKey(Buffer.from([1, 0, 0]), n),
    "RSA even modulus": rsaKey(Buffer.from([1, 0, 1]), evenN),
    "RSA 1024-bit modulus": rsaKey(Buffer.from([1, 0, 1]), n.subarray(0, 128)),
    "ECDSA point off the curve": ecKey(Buffer.concat([Buffer.from([4]), b64u(ec.x!), y])),
    "ECDSA compressed point": ecKey(Buffer.concat([Buffer.from([2]), b64u(ec.x!)])),
    "Ed25519 of 31 bytes": line(new SshWriter().string("ssh-ed25519").string(ed.subarray(0, 31)).toBuffer()),
    "Ed25519 with trailing data": line(Buffer.concat([new SshWriter().string("ssh-ed25519").string(ed).toBuffer(), Buffer.from([0, 0, 0, 1, 0])])),
  };
}
