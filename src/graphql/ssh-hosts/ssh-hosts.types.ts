import { Field, ID, InputType, Int, ObjectType } from "type-graphql";
import type { GqlInputOf } from "../common/inputs.js";
import type { ViewOf } from "../common/views.js";

@ObjectType({ description: "A one-time enrollment token for a server (never its secret after creation)" })
export class HostEnrollmentToken implements ViewOf<"hostEnrollment", "listTokens"> {
  @Field(() => ID) id: string;
  @Field(() => ID) organizationId: string;
  @Field(() => String, { description: "The token's public start, to recognise it" }) prefix: string;
  @Field(() => [String], { description: "The names a host may be certified for with it" }) names: string[];
  @Field(() => String, { nullable: true }) description: string | null;
  @Field(() => Date) expiresAt: Date;
  @Field(() => ID) createdBy: string;
  @Field(() => Date) createdAt: Date;
  @Field(() => Date, { nullable: true }) usedAt: Date | null;
  @Field(() => ID, { nullable: true, description: "The host it enrolled" }) hostId: string | null;
  @Field(() => Date, { nullable: true }) revokedAt: Date | null;
  @Field(() => String, { description: "active, used, expired or revoked" }) status: "active" | "used" | "expired" | "revoked";
}

@ObjectType()
export class CreatedHostEnrollmentToken extends HostEnrollmentToken implements ViewOf<"hostEnrollment", "createToken"> {
  @Field(() => String, { description: "The secret: shown this once, never again" }) token: string;
}

@InputType()
export class HostEnrollmentTokenInput implements GqlInputOf<HostEnrollmentTokenInput, "hostEnrollment", "createToken"> {
  @Field(() => [String], { description: "Exact host names or addresses (patterns only if the operator allows them)" }) names: string[];
  @Field(() => Int, { nullable: true, description: "Minutes the token stays usable (60 unless said, at most 1440)" }) lifetimeMinutes?: number;
  @Field(() => String, { nullable: true }) description?: string;
}

@ObjectType()
export class HostKey {
  @Field(() => String) keyType: string;
  @Field(() => String) fingerprint: string;
  @Field(() => String) publicKey: string;
}

@ObjectType()
export class HostCertificate {
  @Field(() => String) fingerprint: string;
  @Field(() => ID) certificateId: string;
  @Field(() => String) serial: string;
  @Field(() => String) validBefore: string;
}

@ObjectType({ description: "A server enrolled in the organization" })
export class SshHost implements Omit<ViewOf<"hostRenewal", "list">, "certificates" | "hostKeys"> {
  @Field(() => ID) id: string;
  @Field(() => ID) organizationId: string;
  @Field(() => String) name: string;
  @Field(() => [String]) names: string[];
  @Field(() => [HostKey]) hostKeys: HostKey[];
  @Field(() => [HostCertificate], { description: "The certificates it holds now, one per host key" }) certificates: HostCertificate[];
  @Field(() => Date, { nullable: true }) certValidAfter: Date | null;
  @Field(() => Date, { nullable: true }) certValidBefore: Date | null;
  @Field(() => Date, { nullable: true }) lastRenewedAt: Date | null;
  @Field(() => Date) enrolledAt: Date;
  @Field(() => ID, { nullable: true }) enrollmentTokenId: string | null;
  @Field(() => ID, { nullable: true }) enrolledBy: string | null;
  @Field(() => Date, { nullable: true }) retiredAt: Date | null;
  @Field(() => Date) createdAt: Date;
  @Field(() => String, { description: "active, expired or retired" }) status: "active" | "expired" | "retired";
}

@ObjectType({ description: "Which certificate principals may log in as a local account on the hosts a pattern matches (AuthorizedPrincipalsFile)" })
export class SshHostPrincipals implements ViewOf<"hostPrincipals", "list"> {
  @Field(() => ID) id: string;
  @Field(() => ID) organizationId: string;
  @Field(() => String, { description: "A host name, or a pattern with * and ? matched against each of a host's names" }) hostPattern: string;
  @Field(() => String, { description: "The local account" }) login: string;
  @Field(() => [String], { description: "A certificate must carry one of these to log in as the account there" }) principals: string[];
  @Field(() => ID, { nullable: true }) createdBy: string | null;
  @Field(() => Date) createdAt: Date;
  @Field(() => Date) updatedAt: Date;
}

@InputType()
export class SshHostPrincipalsInput implements GqlInputOf<SshHostPrincipalsInput, "hostPrincipals", "set"> {
  @Field(() => String) hostPattern: string;
  @Field(() => String) login: string;
  @Field(() => [String]) principals: string[];
}
