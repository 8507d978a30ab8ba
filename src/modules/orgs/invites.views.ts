import type { UserView } from "../users/index.js";
import type { InviteRow } from "./invites.repository.js";
import type { OrgRole } from "../access/index.js";

export interface InviteView {
  id: string;
  email: string;
  role: OrgRole;
  invitedBy: string;
  expiresAt: Date;
  createdAt: Date;
  expired: boolean;
}

export interface AcceptResult {
  organization: { id: string; name: string };
  role: OrgRole;
  user: UserView;
  /** Set when the invite created the account: the new user is signed in. */
  session?: { token: string; expiresAt: Date; sessionId: string };
}

export const toInviteView = (i: InviteRow, now: Date): InviteView => ({
  id: i.id,
  email: i.email,
  role: i.role,
  invitedBy: i.invitedBy,
  expiresAt: i.expiresAt,
  createdAt: i.createdAt,
  expired: i.expiresAt <= now,
});
