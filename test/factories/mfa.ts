import { totpCode, totpStep } from "../../src/lib/crypto/index.js";
import type { TestApp } from "../helpers/app.js";
import type { TestUser } from "./users.js";

/**
 * The step before the current one, taken at least three seconds before the step ends: a code of
 * the previous step is one step off, the edge of the accepted window, so a request that crosses a
 * step boundary on a loaded machine would see it refused.
 */
export async function previousTotpStep(app: TestApp): Promise<number> {
  const left = 30_000 - (app.clock.now().getTime() % 30_000);
  if (left < 3_000) await new Promise((resolve) => setTimeout(resolve, left + 50));
  return totpStep(app.clock.now()) - 1;
}

/**
 * Enrolls an authenticator app for `user`, confirmed with the previous step's code so that the
 * next sign-in can use the current one (a code is never accepted twice).
 */
export async function enrollTotp(app: TestApp, user: TestUser): Promise<{ secret: string; backupCodes: string[] | null }> {
  const enroll = await app.http.post("/api/v1/auth/totp/enroll", {}, { token: user.token });
  if (enroll.status !== 200) throw new Error(`TOTP enroll failed: ${enroll.status} ${enroll.text}`);
  const secret = enroll.body.data.secret as string;
  const verified = await app.http.post("/api/v1/auth/totp/verify-enrollment", { code: totpCode(secret, await previousTotpStep(app)) }, { token: user.token });
  if (verified.status !== 200) throw new Error(`TOTP verify failed: ${verified.status} ${verified.text}`);
  return { secret, backupCodes: verified.body.data.backup_codes as string[] | null };
}
