import { z } from "zod";

/** "…Confirm" fields are optional, but when sent they must repeat the password. */
export const confirms =
  <K extends string>(field: K, confirmField: `${K}Confirm`, label = "the password") =>
  (v: Record<string, unknown>, ctx: z.RefinementCtx) => {
    if (v[confirmField] !== undefined && v[confirmField] !== v[field]) {
      ctx.addIssue({ code: "custom", path: [confirmField], message: `does not match ${label}` });
    }
  };

const email = z.string().trim().max(320).pipe(z.email("must be a valid email address"));
// Length rules are checked by the password policy (with the email at hand); here only a hard cap.
const newPassword = z.string().max(1024);

export const registerSchema = z
  .object({
    email,
    password: newPassword,
    passwordConfirm: z.string().max(1024).optional(),
    fullName: z.string().trim().min(1).max(255).optional(),
  })
  .superRefine(confirms("password", "passwordConfirm"));
export type RegisterInput = z.input<typeof registerSchema>;

export const loginSchema = z.object({
  email: z.string().trim().min(1).max(320),
  password: z.string().min(1).max(1024),
  rememberMe: z.boolean().default(false),
});
export type LoginInput = z.input<typeof loginSchema>;

export const emailOnlySchema = z.object({ email });
export type EmailOnlyInput = z.input<typeof emailOnlySchema>;

export const tokenSchema = z.object({ token: z.string().min(1).max(512) });
export type TokenInput = z.input<typeof tokenSchema>;

export const resetPasswordSchema = z
  .object({ token: z.string().min(1).max(512), password: newPassword, passwordConfirm: z.string().max(1024).optional() })
  .superRefine(confirms("password", "passwordConfirm"));
export type ResetPasswordInput = z.input<typeof resetPasswordSchema>;

export const changePasswordSchema = z
  .object({
    currentPassword: z.string().min(1).max(1024),
    newPassword,
    newPasswordConfirm: z.string().max(1024).optional(),
  })
  .superRefine(confirms("newPassword", "newPasswordConfirm", "the new password"));
export type ChangePasswordInput = z.input<typeof changePasswordSchema>;

/** The current password is checked by the service when the account has one. */
export const changeEmailSchema = z.object({ newEmail: email, password: z.string().max(1024).optional() });
export type ChangeEmailInput = z.input<typeof changeEmailSchema>;

export const tokenRedirectSchema = z.object({ redirect: z.string().max(2048).optional() });
export type TokenRedirectInput = z.input<typeof tokenRedirectSchema>;

export const activateSchema = z
  .object({
    code: z.string().min(1).max(512),
    password: newPassword,
    passwordConfirm: z.string().max(1024).optional(),
    fullName: z.string().trim().min(1).max(255).optional(),
  })
  .superRefine(confirms("password", "passwordConfirm"));
export type ActivateInput = z.input<typeof activateSchema>;
