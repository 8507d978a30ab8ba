import { Field, ID, Int, ObjectType } from "type-graphql";

@ObjectType()
export class SshKey {
  @Field(() => ID) id: string;
  @Field(() => ID) userId: string;
  @Field(() => String) fingerprint: string;
  @Field(() => String) keyType: string;
  @Field(() => Int) keyBits: number;
  @Field(() => String, { nullable: true }) keyComment: string | null;
  @Field(() => String, { nullable: true }) description: string | null;
  @Field(() => String) publicKey: string;
  @Field(() => Boolean) verified: boolean;
  @Field(() => Date, { nullable: true }) verifiedAt: Date | null;
  @Field(() => Date) createdAt: Date;
  @Field(() => Date) updatedAt: Date;
}

@ObjectType()
export class AddSshKeyPayload {
  @Field(() => SshKey) key: SshKey;
  @Field(() => Boolean, { description: "False when you had already registered this key" }) isNew: boolean;
}

@ObjectType()
export class SshKeyChallenge {
  @Field(() => String, { description: "Sign it: ssh-keygen -Y sign -n file -f <key> <file with this text>" }) challengeText: string;
  @Field(() => ID) keyId: string;
}

@ObjectType()
export class VerifySshKeyPayload {
  @Field(() => Boolean) verified: boolean;
  @Field(() => SshKey) key: SshKey;
}
