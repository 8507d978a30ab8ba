import { readFileSync, writeFileSync } from "node:fs";
import { SK_USER_PRESENCE } from "../../src/lib/ssh/index.js";
import { softSkKey, skSshsig } from "./soft-sk.js";

/**
 * `ssh-keygen -Y sign -n file -f KEY FILE` for a software security key (test/helpers/soft-sk.ts):
 * the CLI e2e tests put a stand-in `ssh-keygen` first in PATH that runs this for `-Y sign` and the
 * real ssh-keygen for everything else, because CI has no authenticator. The "private key" file
 * reads `SOFT-SK <ed25519|ecdsa> <flags> <seed>`; the signature is what ssh-keygen writes.
 */
const args = process.argv.slice(2);
const at = (flag: string) => args[args.indexOf(flag) + 1]!;
const file = args[args.length - 1]!;
const [marker, kind, flags, ...seed] = readFileSync(at("-f"), "utf8").trim().split(" ");
if (marker !== "SOFT-SK" || (kind !== "ed25519" && kind !== "ecdsa")) {
  process.stderr.write("not a software security key\n");
  process.exit(255);
}
const key = softSkKey(kind, seed.join(" "));
const signature = skSshsig(key, readFileSync(file), { namespace: at("-n"), flags: flags === undefined ? SK_USER_PRESENCE : Number(flags), counter: 1 });
writeFileSync(`${file}.sig`, signature);
process.stderr.write("Signing file with a software security key\n");
