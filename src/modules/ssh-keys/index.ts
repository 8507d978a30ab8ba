import type { Clock } from "../../infra/clock.js";
import type { Db } from "../../infra/db.js";
import type { AuditService } from "../audit/audit.service.js";
import { SshKeysService } from "./ssh-keys.service.js";

/** People's SSH public keys and their proof of possession (rule 15). */
export function createSshKeysModule(deps: { db: Db; clock: Clock; audit: AuditService; config: { verifyChallengeTtl: number } }) {
  return { sshKeys: new SshKeysService(deps.db, deps.clock, deps.audit, deps.config) };
}
