import { GraphQLJSONObject } from "graphql-scalars";
import { ArgsType, Field, ID, Int, ObjectType } from "type-graphql";
import type { GqlInputOf } from "../common/inputs.js";
import { Paged } from "../common/paged.js";
import type { ViewOf } from "../common/views.js";

type AuditEntryView = ViewOf<"activity", "list">["items"][number];

@ObjectType({ description: "One audit record" })
export class AuditEntry implements AuditEntryView {
  @Field(() => ID) id: string;
  @Field(() => Date) createdAt: Date;
  @Field(() => String) action: string;
  @Field(() => ID, { nullable: true }) actorId: string | null;
  @Field(() => ID, { nullable: true }) userId: string | null;
  @Field(() => ID, { nullable: true }) organizationId: string | null;
  @Field(() => String, { nullable: true }) resourceType: string | null;
  @Field(() => String, { nullable: true }) resourceId: string | null;
  @Field(() => Boolean) success: boolean;
  @Field(() => String, { nullable: true }) ipAddress: string | null;
  @Field(() => String, { nullable: true }) userAgent: string | null;
  @Field(() => String, { nullable: true }) requestId: string | null;
  @Field(() => GraphQLJSONObject) metadata: Record<string, unknown>;
}

@ObjectType()
export class AuditLogPage extends Paged(AuditEntry) {}

@ArgsType()
export class AuditLogArgs implements GqlInputOf<AuditLogArgs, "users", "listMyAuditLog"> {
  @Field(() => String, { nullable: true }) action?: string;
  @Field(() => Date, { nullable: true, description: "Records from this instant on" }) since?: Date;
  @Field(() => Date, { nullable: true, description: "Records before this instant" }) until?: Date;
  @Field(() => Int, { nullable: true }) page?: number;
  @Field(() => Int, { nullable: true }) perPage?: number;
}

@ArgsType()
export class SystemAuditLogArgs extends AuditLogArgs implements GqlInputOf<SystemAuditLogArgs, "activity", "systemLog"> {
  @Field(() => ID, { nullable: true, description: "Superadmins only; anyone else sees their own records" }) userId?: string;
  @Field(() => String, { nullable: true }) resourceType?: string;
  @Field(() => Boolean, { nullable: true }) success?: boolean;
  @Field(() => String, { nullable: true, description: "A case-insensitive substring of the action, resource, address or user agent" }) q?: string;
}

@ObjectType()
export class ActivityPage implements ViewOf<"activity", "list"> {
  @Field(() => [AuditEntry]) items: AuditEntry[];
  @Field(() => String, { nullable: true, description: "Pass as `cursor` for the next page" }) nextCursor: string | null;
}
