import { parsePublicKey, SshKeyError, type ParsedPublicKey } from "../../lib/ssh/index.js";
import { SshKeyErrors, type SshKeyRow } from "../ssh-keys/index.js";
import { assertKeyAllowed, DEFAULT_CERT_POLICY, mergePolicies, type EffectivePolicy, type StoredPolicy } from "./policy.js";
import { CaErrors } from "./ssh-ca.errors.js";

/**
 * Step 1 over the key the signing context read: named and owned (verified when required), or
 * without a name the newest verified one.
 */
export function checkKey(keyId: string | undefined, key: SshKeyRow | undefined, requireVerifiedKeys: boolean): SshKeyRow {
  if (!keyId) {
    // No key named: the newest verified key (the original API's behaviour).
    if (!key) throw CaErrors.noVerifiedKeys();
    return key;
  }
  // Another user's key is reported like a missing one.
  if (!key) throw SshKeyErrors.notFound();
  if (requireVerifiedKeys && !key.verifiedAt) throw CaErrors.keyNotVerified();
  return key;
}

/**
 * Steps 3–5's policy: the caller's departments' policies in the organization (a department without
 * a stored policy has the default one: it counts in the merge) with those of departments granted
 * to them, merged; then the key against each department's key requirements (a security key,
 * touched, verified). The merge only narrows, so a grant never loosens a policy.
 */
export function keyPolicy(own: Array<StoredPolicy | null>, granted: StoredPolicy[], admin: boolean, key: SshKeyRow): EffectivePolicy {
  const mine = own.map((p) => p ?? DEFAULT_CERT_POLICY);
  // Someone in no department signs under the default policy: with a granted department it still counts, so nothing loosens.
  const base = granted.length && mine.length === 0 ? [DEFAULT_CERT_POLICY] : mine;
  const stored: StoredPolicy[] = [...base, ...granted];
  const policy = mergePolicies(stored, admin);
  assertKeyAllowed(stored, key);
  return policy;
}

// Registered keys as parsed at signing, by their stored line (a pure function of it): the same
// keys sign again and again. Bounded, oldest out first; a key that fails to parse is not kept.
const parsedKeys = new Map<string, ParsedPublicKey>();
const PARSED_KEYS_MAX = 1024;

/** A registered key, checked again at signing: one stored before today's checks may be unsound. */
export function storedKey(line: string): ParsedPublicKey {
  const known = parsedKeys.get(line);
  if (known) return known;
  let parsed: ParsedPublicKey;
  try {
    parsed = parsePublicKey(line);
  } catch (e) {
    if (e instanceof SshKeyError) throw SshKeyErrors.invalid("SSH_KEY_ERROR", `This registered key cannot be certified: ${e.message}. Register a new key.`);
    throw e;
  }
  if (parsedKeys.size >= PARSED_KEYS_MAX) parsedKeys.delete(parsedKeys.keys().next().value!);
  parsedKeys.set(line, parsed);
  return parsed;
}
