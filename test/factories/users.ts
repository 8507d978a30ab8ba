import type { TestApp } from "../helpers/app.js";
import { linkIn, tokenFrom } from "../helpers/smtp-sink.js";

let seq = 0;
export const uniqueEmail = (name = "user") => `${name}.${Date.now().toString(36)}${(seq++).toString(36)}@example.com`;
export const PASSWORD = "correct horse battery staple";

export interface TestUser {
  id: string;
  email: string;
  password: string;
  token: string;
}

/** Registers through the public API and, unless told otherwise, verifies the address from the email. */
export async function registerUser(
  app: TestApp,
  options: { email?: string; password?: string; fullName?: string; verify?: boolean } = {},
): Promise<{ email: string; password: string }> {
  const email = options.email ?? uniqueEmail();
  const password = options.password ?? PASSWORD;
  const res = await app.http.post("/api/v1/auth/register", { email, password, full_name: options.fullName ?? "Test User" });
  if (res.status !== 201) throw new Error(`register failed: ${res.status} ${res.text}`);
  if (options.verify !== false) {
    await app.flushEmails();
    const token = tokenFrom(linkIn(app.mail.lastWith(email, "/verify-email"), "/verify-email"));
    const verified = await app.http.post("/api/v1/auth/verify-email", { token });
    if (verified.status !== 200) throw new Error(`verify failed: ${verified.status} ${verified.text}`);
  }
  return { email, password };
}

export async function login(app: TestApp, email: string, password = PASSWORD, extra: Record<string, unknown> = {}) {
  return app.http.post("/api/v1/auth/login", { email, password, ...extra });
}

/** A registered, verified, signed-in user with a bearer token. */
export async function newUser(app: TestApp, options: { email?: string; fullName?: string; verify?: boolean } = {}): Promise<TestUser> {
  const { email, password } = await registerUser(app, options);
  const res = await login(app, email, password);
  if (res.status !== 200) throw new Error(`login failed: ${res.status} ${res.text}`);
  return { id: res.body.data.user.id, email, password, token: res.body.data.token };
}

/** A signed-in superadmin (promoted as an operator would, through the admin service). */
export async function newSuperadmin(app: TestApp): Promise<TestUser> {
  const user = await newUser(app, { fullName: "Operator" });
  await app.services.operators.setSuperadmin({ actor: { kind: "anonymous" }, requestId: "test", ip: null, userAgent: null }, user.email, true);
  return user;
}
