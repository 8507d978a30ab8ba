import type { UserRow, UserStatus } from "./users.repository.js";

export interface UserView {
  id: string;
  email: string;
  fullName: string | null;
  avatarUrl: string | null;
  emailVerified: boolean;
  emailVerifiedAt: Date | null;
  status: UserStatus;
  isSuperadmin: boolean;
  lastLoginAt: Date | null;
  createdAt: Date;
  updatedAt: Date;
}

export interface MeView extends UserView {
  hasPassword: boolean;
  /** The organization whose admins administer this account's credentials, if any. */
  managedBy: { id: string; name: string } | null;
}

/** One of the signed-in user's organizations, as GET /auth/me lists them (the original API's shape). */
export interface MyOrganizationView {
  id: string;
  name: string;
  slug: string;
  role: string;
}

export const toUserView = (u: UserRow): UserView => ({
  id: u.id,
  email: u.email,
  fullName: u.fullName,
  avatarUrl: u.avatarUrl,
  emailVerified: u.emailVerifiedAt !== null,
  emailVerifiedAt: u.emailVerifiedAt,
  status: u.status,
  isSuperadmin: u.isSuperadmin,
  lastLoginAt: u.lastLoginAt,
  createdAt: u.createdAt,
  updatedAt: u.updatedAt,
});
