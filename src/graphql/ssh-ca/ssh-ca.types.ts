import { GraphQLJSONObject } from "graphql-scalars";
import { Field, ID, InputType, Int, ObjectType } from "type-graphql";
import type { CertificateView } from "../../modules/ssh-ca/index.js";
import type { GqlInputOf } from "../common/inputs.js";
import { Paged } from "../common/paged.js";
import type { ViewOf } from "../common/views.js";

type PreviousCaKeyView = ViewOf<"cas", "list">["previousKeys"][number];

@ObjectType()
export class PreviousCaKey implements PreviousCaKeyView {
  @Field(() => String) publicKey: string;
  @Field(() => String) fingerprint: string;
  @Field(() => Date, { nullable: true }) trustedUntil: Date | null;
}

type CaView = ViewOf<"cas", "list">;

@ObjectType()
export class CertificateAuthority implements CaView {
  @Field(() => ID) id: string;
  @Field(() => ID) organizationId: string;
  @Field(() => String) name: string;
  @Field(() => String, { nullable: true }) description: string | null;
  @Field(() => String) caType: CaView["caType"];
  @Field(() => String) keyType: string;
  @Field(() => String) publicKey: string;
  @Field(() => String) fingerprint: string;
  @Field(() => Int) defaultValidityHours: number;
  @Field(() => Int) maxValidityHours: number;
  @Field(() => [String], { nullable: true, description: "A host CA's host patterns (null: not set, known_hosts says *)" }) hostPatterns: string[] | null;
  @Field(() => [PreviousCaKey]) previousKeys: PreviousCaKey[];
  @Field(() => Date) createdAt: Date;
  @Field(() => Date) updatedAt: Date;
}

@InputType()
export class CreateCaInput implements GqlInputOf<CreateCaInput, "cas", "create"> {
  @Field(() => String) name: string;
  @Field(() => String, { nullable: true }) description?: string;
  @Field(() => String, { nullable: true, description: "user (default) or host" }) caType?: string;
  @Field(() => String, { nullable: true, description: "ed25519 (default), ecdsa or rsa" }) keyType?: string;
  @Field(() => Int, { nullable: true }) defaultCertValidityHours?: number;
  @Field(() => Int, { nullable: true }) maxCertValidityHours?: number;
  @Field(() => [String], { nullable: true, description: "A host CA's host patterns, e.g. *.prod.example.com, 10.0.0.*" }) hostPatterns?: string[];
  @Field(() => Boolean, { nullable: true, description: "Needed for a pattern that matches every host (*)" }) allowAnyHost?: boolean;
}

@InputType()
export class UpdateCaInput implements GqlInputOf<UpdateCaInput, "cas", "update"> {
  @Field(() => String, { nullable: true }) name?: string;
  @Field(() => String, { nullable: true }) description?: string | null;
  @Field(() => Int, { nullable: true }) defaultCertValidityHours?: number;
  @Field(() => Int, { nullable: true }) maxCertValidityHours?: number;
  @Field(() => [String], { nullable: true, description: "A host CA's host patterns; null clears them" }) hostPatterns?: string[] | null;
  @Field(() => Boolean, { nullable: true, description: "Needed for a pattern that matches every host (*)" }) allowAnyHost?: boolean;
}

@ObjectType()
export class RotateCaPayload implements ViewOf<"cas", "rotate"> {
  @Field(() => CertificateAuthority) ca: CertificateAuthority;
  @Field(() => String) oldFingerprint: string;
}

@ObjectType()
export class Certificate implements CertificateView {
  @Field(() => ID) id: string;
  @Field(() => ID) organizationId: string;
  @Field(() => ID) caId: string;
  @Field(() => ID, { nullable: true }) userId: string | null;
  @Field(() => ID, { nullable: true }) sshKeyId: string | null;
  @Field(() => String) certType: CertificateView["certType"];
  @Field(() => String, { description: "Decimal: serials are 64-bit" }) serial: string;
  @Field(() => String) keyId: string;
  @Field(() => [String]) principals: string[];
  @Field(() => [String]) extensions: string[];
  @Field(() => Date) validAfter: Date;
  @Field(() => Date) validBefore: Date;
  @Field(() => String) publicKeyFingerprint: string;
  @Field(() => String, { description: "The -cert.pub line" }) certificate: string;
  @Field(() => String) status: CertificateView["status"];
  @Field(() => Boolean) revoked: boolean;
  @Field(() => Date, { nullable: true }) revokedAt: Date | null;
  @Field(() => String, { nullable: true }) revokeReason: string | null;
  @Field(() => Date) createdAt: Date;
}

@ObjectType()
export class SignedCertificate extends Certificate implements ViewOf<"signing", "signUserCertificate"> {
  @Field(() => ID) certId: string;
  @Field(() => String) organizationName: string;
}

@ObjectType()
export class CertificatePage extends Paged(Certificate) {}

@InputType()
export class SignUserCertificateInput implements GqlInputOf<SignUserCertificateInput, "signing", "signUserCertificate"> {
  @Field(() => ID, { nullable: true, description: "Your SSH key (default: your newest verified key)" }) keyId?: string;
  @Field(() => [String], { nullable: true, description: "Default: every principal you hold" }) principals?: string[];
  @Field(() => Int, { nullable: true }) expiryHours?: number;
  @Field(() => ID, { nullable: true, description: "Required when you belong to several signing organizations" }) orgId?: string;
}

@InputType()
export class SignHostCertificateInput implements GqlInputOf<SignHostCertificateInput, "signing", "signHostCertificate"> {
  @Field(() => String) hostPublicKey: string;
  @Field(() => [String]) principals: string[];
  @Field(() => Int, { nullable: true }) validityHours?: number;
  @Field(() => ID, { nullable: true }) caId?: string;
  @Field(() => ID, { nullable: true }) orgId?: string;
}

@ObjectType()
export class SshServerConfig implements ViewOf<"cas", "serverConfig"> {
  @Field(() => String, { description: "Paste into the file TrustedUserCAKeys names" }) trustedUserCaKeys: string;
  @Field(() => String, { description: "Lines for known_hosts" }) knownHosts: string;
  @Field(() => [String]) userCaKeys: string[];
  @Field(() => [String]) hostCaKeys: string[];
}

type ClientOrg = ViewOf<"cas", "clientConfig">["organizations"][number];

@ObjectType()
export class SshClientHostCa implements NonNullable<ClientOrg["hostCa"]> {
  @Field(() => ID) id: string;
  @Field(() => String) name: string;
  @Field(() => [String], { nullable: true }) hostPatterns: string[] | null;
  @Field(() => [String], { description: "@cert-authority lines, one per trusted key" }) knownHosts: string[];
}

@ObjectType()
export class SshClientOrganization implements ClientOrg {
  @Field(() => ID) id: string;
  @Field(() => String) name: string;
  @Field(() => String) slug: string;
  @Field(() => Boolean, { description: "Certificates can be signed here" }) hasUserCa: boolean;
  @Field(() => SshClientHostCa, { nullable: true }) hostCa: SshClientHostCa | null;
}

@ObjectType()
export class SshClientConfig implements ViewOf<"cas", "clientConfig"> {
  @Field(() => [SshClientOrganization]) organizations: SshClientOrganization[];
}

@ObjectType()
export class EffectiveCertPolicy implements ViewOf<"signing", "effectivePolicy"> {
  @Field(() => ID) organizationId: string;
  @Field(() => Boolean) allowUserExpiry: boolean;
  @Field(() => Int) defaultExpiryHours: number;
  @Field(() => Int) maxExpiryHours: number;
  @Field(() => [String]) extensions: string[];
  @Field(() => Boolean, { description: "A department requires a FIDO2 security key (sk-)" }) requireHardwareKey: boolean;
  @Field(() => Boolean, { description: "A department requires the key's proof to show a touch" }) requireTouch: boolean;
  @Field(() => Boolean, { description: "A department requires the key's proof to show a PIN or biometric check" }) requireVerify: boolean;
}

// Fields REST serves that GraphQL has never exposed: a new view field must be exposed or named here.
type CertificateAuditEntryView = Omit<ViewOf<"certificates", "auditLog">["items"][number], "userAgent" | "requestId">;

@ObjectType()
export class CertificateAuditEntry implements CertificateAuditEntryView {
  @Field(() => ID) id: string;
  @Field(() => Date) createdAt: Date;
  @Field(() => ID, { nullable: true }) organizationId: string | null;
  @Field(() => ID, { nullable: true }) certificateId: string | null;
  @Field(() => ID, { nullable: true }) userId: string | null;
  @Field(() => String) action: string;
  @Field(() => Boolean) success: boolean;
  @Field(() => String, { nullable: true }) message: string | null;
  @Field(() => String, { nullable: true }) ipAddress: string | null;
  @Field(() => GraphQLJSONObject) metadata: Record<string, unknown>;
}

@ObjectType()
export class RevokedCount implements ViewOf<"certificates", "revokeUser"> {
  @Field(() => Int) revoked: number;
}

// source is a constant ("db") kept for the original REST client; GraphQL never had it.
type CaPublicKeyView = Omit<ViewOf<"cas", "publicKey">, "source">;

@ObjectType()
export class CaPublicKey implements CaPublicKeyView {
  @Field(() => String) publicKey: string;
  @Field(() => String) fingerprint: string;
  @Field(() => String) caName: string;
  @Field(() => String) caType: string;
  @Field(() => ID) organizationId: string;
}
