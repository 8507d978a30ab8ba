/** Dotted audit action names. One list, so a typo is a type error rather than a new action. */
export const AuditAction = {
  userRegister: "user.register",
  userLogin: "user.login",
  userLoginFailed: "user.login.failed",
  userLogout: "user.logout",
  userUpdate: "user.update",
  userDelete: "user.delete",
  userSuspend: "user.suspend",
  userUnsuspend: "user.unsuspend",
  userPasswordChange: "user.password_change",
  userPasswordResetRequested: "user.password_reset.requested",
  userPasswordReset: "user.password_reset",
  userEmailVerified: "user.email_verified",
  userVerificationResent: "user.email_verification.resent",
  userPromoted: "user.superadmin.granted",
  userDemoted: "user.superadmin.revoked",
  sessionRevoke: "session.revoke",
  emailRetried: "email.retried",
} as const;

export type AuditActionName = (typeof AuditAction)[keyof typeof AuditAction];
