import { Field, ID, Int, ObjectType } from "type-graphql";
import type { ViewOf } from "../common/views.js";

// When the last challenge was issued serves the service's freshness check; GraphQL never exposed it.
type SshKeyView = Omit<ViewOf<"sshKeys", "get">, "verifyTextCreatedAt">;

@ObjectType()
export class SshKey implements SshKeyView {
  @Field(() => ID) id: string;
  @Field(() => ID) userId: string;
  @Field(() => String) fingerprint: string;
  @Field(() => String, { description: "ed25519, ecdsa, rsa, or a FIDO2 security key: sk-ed25519, sk-ecdsa" }) keyType: string;
  @Field(() => Boolean, { description: "A FIDO2 security key (sk-): its private half never leaves the device" }) hardwareBacked: boolean;
  @Field(() => Boolean, { nullable: true, description: "A security key whose proof of possession showed a touch (user presence); null: not a security key, or not proved yet" })
  skUserPresence: boolean | null;
  @Field(() => Boolean, { nullable: true, description: "A security key whose proof of possession showed a PIN or biometric check (user verification); null as above" })
  skUserVerification: boolean | null;
  @Field(() => Int) keyBits: number;
  @Field(() => String, { nullable: true }) keyComment: string | null;
  @Field(() => String, { nullable: true }) description: string | null;
  @Field(() => String) publicKey: string;
  @Field(() => Boolean) verified: boolean;
  @Field(() => Date, { nullable: true }) verifiedAt: Date | null;
  @Field(() => Date) createdAt: Date;
  @Field(() => Date) updatedAt: Date;
}

type AddSshKeyView = ViewOf<"sshKeys", "add">;

@ObjectType()
export class AddSshKeyPayload implements AddSshKeyView {
  @Field(() => SshKey) key: AddSshKeyView["key"];
  @Field(() => Boolean, { description: "False when you had already registered this key" }) isNew: boolean;
}

// validationText repeats challengeText under the name the original REST client reads.
type SshKeyChallengeView = Omit<ViewOf<"sshKeys", "challenge">, "validationText">;

@ObjectType()
export class SshKeyChallenge implements SshKeyChallengeView {
  @Field(() => String, { description: "Sign it: ssh-keygen -Y sign -n file -f <key> <file with this text>" }) challengeText: string;
  @Field(() => ID) keyId: string;
}

type VerifySshKeyView = ViewOf<"sshKeys", "verify">;

@ObjectType()
export class VerifySshKeyPayload implements VerifySshKeyView {
  @Field(() => Boolean) verified: boolean;
  @Field(() => SshKey) key: VerifySshKeyView["key"];
}
