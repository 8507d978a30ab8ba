import { z } from "zod";

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
  .refine((v) => v.passwordConfirm === undefined || v.passwordConfirm === v.password, {
    path: ["passwordConfirm"],
    message: "does not match the password",
  });

export const loginSchema = z.object({
  email: z.string().trim().min(1).max(320),
  password: z.string().min(1).max(1024),
  rememberMe: z.boolean().default(false),
});

export const emailOnlySchema = z.object({ email });

export const tokenSchema = z.object({ token: z.string().min(1).max(512) });

export const resetPasswordSchema = z
  .object({ token: z.string().min(1).max(512), password: newPassword, passwordConfirm: z.string().max(1024).optional() })
  .refine((v) => v.passwordConfirm === undefined || v.passwordConfirm === v.password, {
    path: ["passwordConfirm"],
    message: "does not match the password",
  });

export const changePasswordSchema = z
  .object({
    currentPassword: z.string().min(1).max(1024),
    newPassword,
    newPasswordConfirm: z.string().max(1024).optional(),
  })
  .refine((v) => v.newPasswordConfirm === undefined || v.newPasswordConfirm === v.newPassword, {
    path: ["newPasswordConfirm"],
    message: "does not match the new password",
  });

export const tokenRedirectSchema = z.object({ redirect: z.string().max(2048).optional() });

export const activateSchema = z
  .object({
    code: z.string().min(1).max(512),
    password: newPassword,
    passwordConfirm: z.string().max(1024).optional(),
    fullName: z.string().trim().min(1).max(255).optional(),
  })
  .refine((v) => v.passwordConfirm === undefined || v.passwordConfirm === v.password, {
    path: ["passwordConfirm"],
    message: "does not match the password",
  });
