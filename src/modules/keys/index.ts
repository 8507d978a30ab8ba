import type { Db } from "../../infra/db.js";
import type { SecretBox } from "../../lib/crypto/index.js";
import type { AuditService } from "../audit/index.js";
import { ResealService } from "./reseal.service.js";

export type { ResealResult, SealedKindReport } from "./reseal.service.js";
export type { SealedKindName } from "./reseal.service.js";

/** Sealed data at rest: which key seals what, and re-sealing everything under the current key. */
export function createKeysModule(deps: { db: Db; box: SecretBox; caBox: SecretBox; audit: AuditService }) {
  return { reseal: new ResealService(deps.db, { data: deps.box, ca: deps.caBox }, deps.audit) };
}
