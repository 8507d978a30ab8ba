import { GraphQLJSONObject } from "graphql-scalars";
import { Field, ID, InputType, Int, ObjectType } from "type-graphql";

@ObjectType()
export class WebauthnOptions {
  @Field(() => String, { description: "Send it back with the response" }) challengeId: string;
  @Field(() => GraphQLJSONObject, { description: "PublicKeyCredentialCreation/RequestOptionsJSON" }) options: Record<string, unknown>;
}

@ObjectType()
export class WebauthnCredential {
  @Field(() => ID) id: string;
  @Field(() => String) name: string;
  @Field(() => [String]) transports: string[];
  @Field(() => String) deviceType: string;
  @Field(() => Boolean) backedUp: boolean;
  @Field(() => Date) createdAt: Date;
  @Field(() => Date, { nullable: true }) lastUsedAt: Date | null;
}

@ObjectType()
export class RegisteredCredential {
  @Field(() => WebauthnCredential) credential: WebauthnCredential;
  @Field(() => [String], { nullable: true, description: "With the first MFA method only: shown this once" }) backupCodes: string[] | null;
}

@ObjectType()
export class MfaStatus {
  @Field(() => Boolean) mfaEnabled: boolean;
  @Field(() => Boolean) webauthnEnabled: boolean;
  @Field(() => Int) credentialCount: number;
  @Field(() => Boolean) totpEnabled: boolean;
  @Field(() => Int) backupCodesRemaining: number;
}

@ObjectType()
export class TotpEnrollment {
  @Field(() => String) secret: string;
  @Field(() => String) provisioningUri: string;
  @Field(() => String, { description: "data:image/png;base64 QR code of the URI" }) qrCode: string;
}

@ObjectType()
export class BackupCodes {
  @Field(() => [String], { nullable: true }) backupCodes: string[] | null;
}

@ObjectType()
export class SecurityPolicy {
  @Field(() => ID) organizationId: string;
  @Field(() => String) mfaPolicyMode: string;
  @Field(() => Int) mfaGracePeriodDays: number;
  @Field(() => Int) notifyDaysBefore: number;
  @Field(() => Int) policyVersion: number;
}

@InputType()
export class SecurityPolicyInput {
  @Field(() => String, { description: "disabled | optional | required" }) mfaPolicyMode: string;
  @Field(() => Int, { nullable: true }) mfaGracePeriodDays?: number;
  @Field(() => Int, { nullable: true }) notifyDaysBefore?: number;
}

@ObjectType()
export class MemberCompliance {
  @Field(() => ID) userId: string;
  @Field(() => String) userEmail: string;
  @Field(() => String, { nullable: true }) userName: string | null;
  @Field(() => String) status: string;
  @Field(() => Date, { nullable: true }) deadlineAt: Date | null;
  @Field(() => Date, { nullable: true }) compliantAt: Date | null;
  @Field(() => Date, { nullable: true }) lastNotifiedAt: Date | null;
}

@ObjectType()
export class MyCompliance {
  @Field(() => ID) organizationId: string;
  @Field(() => String) organizationName: string;
  @Field(() => String) status: string;
  @Field(() => Date, { nullable: true }) deadlineAt: Date | null;
}

@ObjectType()
export class ReminderResult {
  @Field(() => Boolean) sent: boolean;
}
