import { totpCode, totpStep } from "../../src/lib/crypto/index.js";
import type { TestApp } from "../helpers/app.js";
import type { TestUser } from "./users.js";

/**
 * Enrolls an authenticator app for `user`, confirmed with the previous step's code so that the
 * next sign-in can use the current one (a code is never accepted twice).
 */
export async function enrollTotp(app: TestApp, user: TestUser): Promise<{ secret: string; backupCodes: string[] | null }> {
  const enroll = await app.http.post("/api/v1/auth/totp/enroll", {}, { token: user.token });
  if (enroll.status !== 200) throw new Error(`TOTP enroll failed: ${enroll.status} ${enroll.text}`);
  const secret = enroll.body.data.secret as string;
  const verified = await app.http.post("/api/v1/auth/totp/verify-enrollment", { code: totpCode(secret, totpStep(app.clock.now()) - 1) }, { token: user.token });
  if (verified.status !== 200) throw new Error(`TOTP verify failed: ${verified.status} ${verified.text}`);
  return { secret, backupCodes: verified.body.data.backup_codes as string[] | null };
}
