import { Field, ID, ObjectType } from "type-graphql";
import type { DomainStatus } from "../../modules/domains/index.js";
import type { ViewOf } from "../common/views.js";

@ObjectType({ description: "A domain an organization claims, proved by a DNS TXT record" })
export class OrganizationDomain implements ViewOf<"domains", "list"> {
  @Field(() => ID) id: string;
  @Field(() => ID) organizationId: string;
  @Field(() => String, { description: "Lower case, internationalised names in their xn-- form" }) domain: string;
  @Field(() => String, { description: "pending: not proved yet; verified: the TXT record was found; lapsed: it went missing on consecutive re-checks" }) status: DomainStatus;
  @Field(() => String, { description: "Where the TXT record goes: _keyward-verification.<domain>" }) recordName: string;
  @Field(() => String, { description: "What it must say: keyward-verification=<token>" }) recordValue: string;
  @Field(() => Date, { nullable: true }) verifiedAt: Date | null;
  @Field(() => Date, { nullable: true }) lastCheckedAt: Date | null;
  @Field(() => String, { nullable: true, description: "Why the last check did not find the record" }) lastCheckError: string | null;
  @Field(() => Date, { nullable: true }) nextCheckAt: Date | null;
  @Field(() => ID, { nullable: true }) createdBy: string | null;
  @Field(() => Date) createdAt: Date;
}
