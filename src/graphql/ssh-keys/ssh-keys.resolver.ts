import { Arg, Authorized, Ctx, ID, Mutation, Query, Resolver } from "type-graphql";
import type { Services } from "../../container.js";
import { message, MessagePayload } from "../common/common.types.js";
import { omitNulls } from "../common/nulls.js";
import type { GqlContext } from "../context.js";
import { scope } from "../scope.js";
import { AddSshKeyPayload, SshKey, SshKeyChallenge, VerifySshKeyPayload } from "./ssh-keys.types.js";

/** A user's SSH public keys and the proof of possession that verifies them. */
@Resolver()
export class SshKeysResolver {
  constructor(private readonly s: Pick<Services, "sshKeys">) {}

  @Authorized()
  @scope("ssh:keys")
  @Query(() => [SshKey])
  mySshKeys(@Ctx() { ctx }: GqlContext) {
    return this.s.sshKeys.list(ctx);
  }

  @Authorized()
  @scope("ssh:keys")
  @Query(() => SshKey)
  sshKey(@Ctx() { ctx }: GqlContext, @Arg("id", () => ID) id: string) {
    return this.s.sshKeys.get(ctx, id);
  }

  @Authorized()
  @scope("ssh:keys")
  @Mutation(() => AddSshKeyPayload, { description: "Idempotent: the same key again returns it with isNew false" })
  addSshKey(@Ctx() { ctx }: GqlContext, @Arg("publicKey", () => String) publicKey: string, @Arg("description", () => String, { nullable: true }) description?: string) {
    return this.s.sshKeys.add(ctx, omitNulls({ publicKey, description }));
  }

  @Authorized()
  @scope("ssh:keys")
  @Mutation(() => SshKey)
  updateSshKeyDescription(@Ctx() { ctx }: GqlContext, @Arg("id", () => ID) id: string, @Arg("description", () => String, { nullable: true }) description?: string) {
    return this.s.sshKeys.updateDescription(ctx, id, { description: description ?? null });
  }

  @Authorized()
  @scope("ssh:keys")
  @Mutation(() => MessagePayload)
  async deleteSshKey(@Ctx() { ctx }: GqlContext, @Arg("id", () => ID) id: string) {
    await this.s.sshKeys.delete(ctx, id);
    return message("SSH key deleted");
  }

  @Authorized()
  @scope("ssh:keys")
  @Mutation(() => SshKeyChallenge)
  sshKeyChallenge(@Ctx() { ctx }: GqlContext, @Arg("id", () => ID) id: string) {
    return this.s.sshKeys.challenge(ctx, id);
  }

  @Authorized()
  @scope("ssh:keys")
  @Mutation(() => VerifySshKeyPayload)
  verifySshKey(@Ctx() { ctx }: GqlContext, @Arg("id", () => ID) id: string, @Arg("signature", () => String) signature: string) {
    return this.s.sshKeys.verify(ctx, id, { signature });
  }
}
