import { existsSync, readFileSync } from "node:fs";
import { homedir } from "node:os";
import { join, resolve } from "node:path";
import { CliError, ExitCode } from "./errors.js";

/** A key pair on disk: the private key signs challenges, the public line is what the server stores. */
export interface LocalKey {
  privatePath: string;
  publicPath: string;
  /** "<type> <base64>" without the comment: what identifies the key. */
  publicLine: string;
  comment: string;
}

/** ssh's own default identities, Ed25519 first (the key type to prefer today), then security keys. */
const DEFAULT_NAMES = ["id_ed25519", "id_ecdsa", "id_rsa", "id_ed25519_sk", "id_ecdsa_sk"];

function load(privatePath: string): LocalKey {
  const publicPath = `${privatePath}.pub`;
  if (!existsSync(publicPath)) throw new CliError(`No public key at ${publicPath} (recreate it with \`ssh-keygen -y -f ${privatePath} > ${publicPath}\`)`, ExitCode.USAGE, "NO_KEY");
  if (!existsSync(privatePath)) throw new CliError(`No private key at ${privatePath}: keyward signs its challenge to prove you hold the key`, ExitCode.USAGE, "NO_KEY");
  const [type, blob, ...comment] = readFileSync(publicPath, "utf8").trim().split(/\s+/);
  if (!type || !blob) throw new CliError(`${publicPath} is not an OpenSSH public key`, ExitCode.USAGE, "NO_KEY");
  return { privatePath, publicPath, publicLine: `${type} ${blob}`, comment: comment.join(" ") };
}

/** The key named by --key (either half of the pair), or the first default identity in ~/.ssh. */
export function findKey(path?: string): LocalKey {
  if (path) return load(resolve(path.replace(/\.pub$/, "").replace(/^~(?=\/)/, homedir())));
  const dir = join(homedir(), ".ssh");
  const found = DEFAULT_NAMES.map((n) => join(dir, n)).find((p) => existsSync(p) && existsSync(`${p}.pub`));
  if (!found) throw new CliError(`No SSH key found in ${dir} (${DEFAULT_NAMES.join(", ")}): create one with \`ssh-keygen -t ed25519\` or pass --key PATH`, ExitCode.USAGE, "NO_KEY");
  return load(found);
}

/** Same key material, whatever the comments say. */
export function sameKey(a: string, b: string): boolean {
  const blob = (line: string) => line.trim().split(/\s+/).slice(0, 2).join(" ");
  return blob(a) === blob(b);
}

export const certPathFor = (key: LocalKey) => `${key.privatePath}-cert.pub`;
