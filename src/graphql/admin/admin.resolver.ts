import { Arg, Authorized, Ctx, ID, Int, Mutation, Query, Resolver } from "type-graphql";
import type { Services } from "../../container.js";
import { AuditLogPage } from "../audit/audit.types.js";
import { SUPERADMIN } from "../auth-checker.js";
import { loose } from "../common/inputs.js";
import { message, MessagePayload } from "../common/common.types.js";
import { omitNulls } from "../common/nulls.js";
import type { GqlContext } from "../context.js";
import { SshKey } from "../ssh-keys/ssh-keys.types.js";
import { User } from "../users/users.types.js";
import { AdminUser, AdminUserPage, UserMfaMethods } from "./admin.types.js";

/** Account administration: superadmins over everyone, org owners/admins over their members (the service decides). */
@Resolver()
export class AdminResolver {
  constructor(private readonly s: Pick<Services, "adminUsers" | "operators">) {}

  @Authorized()
  @Query(() => AdminUserPage, { description: "Accounts you administer" })
  adminUsers(
    @Ctx() { ctx }: GqlContext,
    @Arg("q", () => String, { nullable: true }) q?: string,
    @Arg("page", () => Int, { nullable: true }) page?: number,
    @Arg("perPage", () => Int, { nullable: true }) perPage?: number,
    @Arg("show", () => String, { nullable: true, description: "all (default), superadmins, suspended, or deleted (superadmins only)" }) show?: string,
  ) {
    return this.s.adminUsers.search(ctx, loose(omitNulls({ q, page, perPage, show })));
  }

  @Authorized()
  @Query(() => AdminUser)
  adminUser(@Ctx() { ctx }: GqlContext, @Arg("userId", () => ID) userId: string) {
    return this.s.adminUsers.get(ctx, userId);
  }

  @Authorized()
  @Mutation(() => User, { description: "Suspend an account: its sessions end at once" })
  suspendUser(@Ctx() { ctx }: GqlContext, @Arg("userId", () => ID) userId: string, @Arg("reason", () => String, { nullable: true }) reason?: string) {
    return this.s.adminUsers.suspend(ctx, userId, omitNulls({ reason }));
  }

  @Authorized()
  @Mutation(() => User)
  unsuspendUser(@Ctx() { ctx }: GqlContext, @Arg("userId", () => ID) userId: string) {
    return this.s.adminUsers.unsuspend(ctx, userId);
  }

  @Authorized()
  @Mutation(() => User)
  verifyUserEmail(@Ctx() { ctx }: GqlContext, @Arg("userId", () => ID) userId: string) {
    return this.s.adminUsers.verifyEmail(ctx, userId);
  }

  @Authorized()
  @Mutation(() => MessagePayload)
  async setUserPassword(@Ctx() { ctx }: GqlContext, @Arg("userId", () => ID) userId: string, @Arg("password", () => String) password: string) {
    await this.s.adminUsers.setPassword(ctx, userId, { password });
    return message("Password set");
  }

  @Authorized()
  @Mutation(() => MessagePayload)
  async deleteUser(@Ctx() { ctx }: GqlContext, @Arg("userId", () => ID) userId: string, @Arg("confirm", () => Boolean) confirm: boolean) {
    await this.s.adminUsers.delete(ctx, userId, loose({ confirm }));
    return message("User deleted");
  }

  @Authorized()
  @Mutation(() => User)
  restoreUser(@Ctx() { ctx }: GqlContext, @Arg("userId", () => ID) userId: string) {
    return this.s.adminUsers.restore(ctx, userId);
  }

  @Authorized(SUPERADMIN)
  @Mutation(() => User, { description: "Make an active account with a verified address a superadmin (superadmins)" })
  promoteUser(@Ctx() { ctx }: GqlContext, @Arg("userId", () => ID) userId: string) {
    return this.s.operators.promote(ctx, userId);
  }

  @Authorized(SUPERADMIN)
  @Mutation(() => User, { description: "Take superadmin away from another account (superadmins; never from yourself)" })
  demoteUser(@Ctx() { ctx }: GqlContext, @Arg("userId", () => ID) userId: string) {
    return this.s.operators.demote(ctx, userId);
  }

  @Authorized(SUPERADMIN)
  @Query(() => AuditLogPage, { description: "Every audit record about one account (superadmins)" })
  superadminUserAudit(
    @Ctx() { ctx }: GqlContext,
    @Arg("userId", () => ID) userId: string,
    @Arg("page", () => Int, { nullable: true }) page?: number,
    @Arg("perPage", () => Int, { nullable: true }) perPage?: number,
  ) {
    return this.s.adminUsers.userAudit(ctx, userId, omitNulls({ page, perPage }));
  }

  @Authorized()
  @Query(() => UserMfaMethods, { description: "An administered user's MFA methods (no secrets)" })
  userMfaMethods(@Ctx() { ctx }: GqlContext, @Arg("userId", () => ID) userId: string) {
    return this.s.adminUsers.mfaMethods(ctx, userId);
  }

  @Authorized()
  @Query(() => [SshKey], { description: "An administered user's SSH public keys" })
  userSshKeys(@Ctx() { ctx }: GqlContext, @Arg("userId", () => ID) userId: string) {
    return this.s.adminUsers.sshKeysOf(ctx, userId);
  }

  @Authorized()
  @Mutation(() => MessagePayload, { description: "Remove an administered user's MFA: one credential, totp, webauthn or all" })
  async removeUserMfa(
    @Ctx() { ctx }: GqlContext,
    @Arg("userId", () => ID) userId: string,
    @Arg("method", () => String) method: string,
    @Arg("credentialId", () => ID, { nullable: true }) credentialId?: string,
  ) {
    await this.s.adminUsers.removeMfa(ctx, userId, omitNulls({ method, credentialId }));
    return message("MFA removed");
  }
}
