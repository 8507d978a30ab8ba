import type { Clock } from "../../infra/clock.js";
import type { Db } from "../../infra/db.js";
import type { AuditService } from "../audit/index.js";
import { sshKeysRepository } from "./ssh-keys.repository.js";
import { SshKeysService, toSshKeyView, type SshKeyView } from "./ssh-keys.service.js";

export type { SshKeyView } from "./ssh-keys.service.js";
/** The key columns and row, for a repository that joins a person's key into its own read (SSH signing). */
export { sshKeyColumns, type SshKeyRow } from "./ssh-keys.repository.js";
export { SshKeyErrors } from "./ssh-keys.errors.js";
export { addKeySchema, describeKeySchema, verifyKeySchema } from "./ssh-keys.schemas.js";

/** A person's SSH public keys, for a caller the admin-reach rule already let see the account. */
export async function sshKeysOfUser(db: Db, userId: string): Promise<SshKeyView[]> {
  return (await sshKeysRepository.listForUser(db, userId)).map(toSshKeyView);
}

/** People's SSH public keys and their proof of possession (rule 15). */
export function createSshKeysModule(deps: { db: Db; clock: Clock; audit: AuditService; config: { verifyChallengeTtl: number } }) {
  return { sshKeys: new SshKeysService(deps.db, deps.clock, deps.audit, deps.config) };
}
