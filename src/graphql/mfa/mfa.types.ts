import { GraphQLJSONObject } from "graphql-scalars";
import { Field, ID, InputType, Int, ObjectType } from "type-graphql";
import type { GqlInputOf } from "../common/inputs.js";
import type { ViewOf } from "../common/views.js";

// One type for enrolling and for signing in: options are creation or request options, a JSON object either way.
type WebauthnOptionsView = Omit<ViewOf<"mfa", "beginWebauthnRegistration">, "options">;
type WebauthnOptionsJson = ViewOf<"mfa", "beginWebauthnRegistration">["options"] | ViewOf<"mfaLogin", "beginWebauthn">["options"];

@ObjectType()
export class WebauthnOptions implements WebauthnOptionsView {
  @Field(() => String, { description: "Send it back with the response" }) challengeId: string;
  @Field(() => GraphQLJSONObject, { description: "PublicKeyCredentialCreation/RequestOptionsJSON" }) options: WebauthnOptionsJson;
}

// Fields REST serves that GraphQL has never exposed: a new view field must be exposed or named here.
type WebauthnCredentialView = Omit<ViewOf<"mfa", "listCredentials">, "userId" | "aaguid">;

@ObjectType()
export class WebauthnCredential implements WebauthnCredentialView {
  @Field(() => ID) id: string;
  @Field(() => String) name: string;
  @Field(() => [String]) transports: string[];
  @Field(() => String) deviceType: string;
  @Field(() => Boolean) backedUp: boolean;
  @Field(() => Date) createdAt: Date;
  @Field(() => Date, { nullable: true }) lastUsedAt: Date | null;
}

type RegisteredCredentialView = ViewOf<"mfa", "completeWebauthnRegistration">;

@ObjectType()
export class RegisteredCredential implements RegisteredCredentialView {
  @Field(() => WebauthnCredential) credential: RegisteredCredentialView["credential"];
  @Field(() => [String], { nullable: true, description: "With the first MFA method only: shown this once" }) backupCodes: string[] | null;
}

// Fields REST serves that GraphQL has never exposed: a new view field must be exposed or named here.
type MfaStatusView = Omit<ViewOf<"mfa", "status">, "totpVerifiedAt">;

@ObjectType()
export class MfaStatus implements MfaStatusView {
  @Field(() => Boolean) mfaEnabled: boolean;
  @Field(() => Boolean) webauthnEnabled: boolean;
  @Field(() => Int) credentialCount: number;
  @Field(() => Boolean) totpEnabled: boolean;
  @Field(() => Int) backupCodesRemaining: number;
}

@ObjectType()
export class TotpEnrollment implements ViewOf<"mfa", "enrollTotp"> {
  @Field(() => String) secret: string;
  @Field(() => String) provisioningUri: string;
  @Field(() => String, { description: "data:image/png;base64 QR code of the URI" }) qrCode: string;
}

// enabled is always true in the answer to a verified enrollment; GraphQL never had it.
type BackupCodesView = Omit<ViewOf<"mfa", "verifyTotpEnrollment">, "enabled">;

@ObjectType()
export class BackupCodes implements BackupCodesView {
  @Field(() => [String], { nullable: true }) backupCodes: string[] | null;
}

type SecurityPolicyView = ViewOf<"mfaPolicy", "getPolicy">;

@ObjectType()
export class SecurityPolicy implements SecurityPolicyView {
  @Field(() => ID) organizationId: string;
  @Field(() => String) mfaPolicyMode: SecurityPolicyView["mfaPolicyMode"];
  @Field(() => Int) mfaGracePeriodDays: number;
  @Field(() => Int) notifyDaysBefore: number;
  @Field(() => Int) policyVersion: number;
}

@InputType()
export class SecurityPolicyInput implements GqlInputOf<SecurityPolicyInput, "mfaPolicy", "putPolicy"> {
  @Field(() => String, { description: "disabled | optional | required" }) mfaPolicyMode: string;
  @Field(() => Int, { nullable: true }) mfaGracePeriodDays?: number;
  @Field(() => Int, { nullable: true }) notifyDaysBefore?: number;
}

type MemberComplianceView = ViewOf<"mfaPolicy", "compliance">;

@ObjectType()
export class MemberCompliance implements MemberComplianceView {
  @Field(() => ID) userId: string;
  @Field(() => String) userEmail: string;
  @Field(() => String, { nullable: true }) userName: string | null;
  @Field(() => String) status: MemberComplianceView["status"];
  @Field(() => Date, { nullable: true }) deadlineAt: Date | null;
  @Field(() => Date, { nullable: true }) compliantAt: Date | null;
  @Field(() => Date, { nullable: true }) lastNotifiedAt: Date | null;
}

type MyComplianceView = ViewOf<"mfaPolicy", "myCompliance">;

@ObjectType()
export class MyCompliance implements MyComplianceView {
  @Field(() => ID) organizationId: string;
  @Field(() => String) organizationName: string;
  @Field(() => String) status: MyComplianceView["status"];
  @Field(() => Date, { nullable: true }) deadlineAt: Date | null;
}

@ObjectType()
export class ReminderResult implements ViewOf<"mfaPolicy", "sendReminder"> {
  @Field(() => Boolean) sent: boolean;
}
