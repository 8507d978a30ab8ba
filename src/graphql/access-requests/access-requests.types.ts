import { Field, ID, InputType, Int, ObjectType } from "type-graphql";
import type { AccessPolicyView, AccessRequestView, DepartmentAccessPolicyView, RoleAccessPolicyView } from "../../modules/access-requests/index.js";
import type { GqlInputOf } from "../common/inputs.js";

// Just-in-time access (issue 37): principals asked for a bounded time, decided, granted until a time.

@ObjectType({ description: "A request for a principal, a department's grants or an organization role for a bounded time; approved, it is a grant that ends by itself" })
export class AccessRequest implements AccessRequestView {
  @Field(() => ID) id: string;
  @Field(() => ID) organizationId: string;
  @Field(() => String, { nullable: true }) organizationName: string | null;
  @Field(() => ID) userId: string;
  @Field(() => String, { nullable: true }) userEmail: string | null;
  @Field(() => String, { nullable: true }) userName: string | null;
  @Field(() => String, { description: "principal, department (the department's principals, as if a member, while the grant lasts), or role (an organization role, e.g. admin, while the grant lasts)" }) kind: AccessRequestView["kind"];
  @Field(() => ID, { nullable: true }) principalId: string | null;
  @Field(() => String, { nullable: true, description: "The principal's name (kind principal)" }) principal: string | null;
  @Field(() => ID, { nullable: true }) departmentId: string | null;
  @Field(() => String, { nullable: true, description: "The department's name (kind department)" }) department: string | null;
  @Field(() => String, { nullable: true, description: "The organization role asked for (kind role): admin" }) role: string | null;
  @Field(() => String, { description: "pending, approved, rejected, cancelled, expired (a pending request nobody decided in time)" }) state: AccessRequestView["state"];
  @Field(() => String) reason: string;
  @Field(() => Int) requestedMinutes: number;
  @Field(() => Date, { description: "When a pending request lapses" }) expiresAt: Date;
  @Field(() => ID, { nullable: true }) decidedByUserId: string | null;
  @Field(() => String, { nullable: true }) decisionReason: string | null;
  @Field(() => Date, { nullable: true }) decidedAt: Date | null;
  @Field(() => Int, { nullable: true }) grantedMinutes: number | null;
  @Field(() => Date, { nullable: true }) grantStartsAt: Date | null;
  @Field(() => Date, { nullable: true, description: "Certificates carrying the principal through this grant end at this time at the latest" }) grantEndsAt: Date | null;
  @Field(() => Date, { nullable: true, description: "An approver ended the grant early (grantEndsAt is then that moment)" }) revokedAt: Date | null;
  @Field(() => ID, { nullable: true }) revokedByUserId: string | null;
  @Field(() => String, { nullable: true }) revokeReason: string | null;
  @Field(() => Boolean, { description: "An approved request whose grant is in force now" }) active: boolean;
  @Field(() => Date) createdAt: Date;
}

@ObjectType({ description: "Whether, by whom, for how long and with or without approval a principal can be requested" })
export class AccessRequestPolicy implements AccessPolicyView {
  @Field(() => ID) organizationId: string;
  @Field(() => ID) principalId: string;
  @Field(() => String) principal: string;
  @Field(() => Boolean) requestable: boolean;
  @Field(() => ID, { nullable: true, description: "Only members of this department may ask (null: any member)" }) requesterDepartmentId: string | null;
  @Field(() => Int) maxDurationMinutes: number;
  @Field(() => Boolean, { description: "false: approved at once (on-call), audited like an approval" }) approvalRequired: boolean;
  @Field(() => Date) updatedAt: Date;
}

@ObjectType({ description: "Whether, by whom, for how long and with or without approval a department's grants (its principals, as if a member) can be requested" })
export class DepartmentAccessRequestPolicy implements DepartmentAccessPolicyView {
  @Field(() => ID) organizationId: string;
  @Field(() => ID) departmentId: string;
  @Field(() => String) department: string;
  @Field(() => Boolean) requestable: boolean;
  @Field(() => ID, { nullable: true, description: "Only members of this department may ask (null: any member)" }) requesterDepartmentId: string | null;
  @Field(() => Int) maxDurationMinutes: number;
  @Field(() => Boolean, { description: "false: approved at once (on-call), audited like an approval" }) approvalRequired: boolean;
  @Field(() => Date) updatedAt: Date;
}

@ObjectType({ description: "Whether, by whom, for how long and with or without approval an organization role (admin) can be requested; owners set it" })
export class RoleAccessRequestPolicy implements RoleAccessPolicyView {
  @Field(() => ID) organizationId: string;
  @Field(() => String) role: string;
  @Field(() => Boolean) requestable: boolean;
  @Field(() => ID, { nullable: true, description: "Only members of this department may ask (null: any member)" }) requesterDepartmentId: string | null;
  @Field(() => Int) maxDurationMinutes: number;
  @Field(() => Boolean, { description: "false: approved at once, audited like an approval" }) approvalRequired: boolean;
  @Field(() => Date) updatedAt: Date;
}

@InputType()
export class RequestAccessInput implements GqlInputOf<RequestAccessInput, "accessRequests", "request"> {
  @Field(() => String, { nullable: true, description: "The principal's name (or id); or give department" }) principal?: string;
  @Field(() => String, { nullable: true, description: "A department's name (or id): its principals, as if a member, while the grant lasts" }) department?: string;
  @Field(() => String, { nullable: true, description: "An organization role above yours (admin; never owner), held while the grant lasts" }) role?: "owner" | "admin" | "member" | "guest";
  @Field(() => Int, { nullable: true, description: "How long, in minutes (or give duration)" }) durationMinutes?: number;
  @Field(() => String, { nullable: true, description: 'How long: "30m", "2h", "1h30m", "1d"' }) duration?: string;
  @Field(() => String) reason: string;
}

@InputType()
export class ApproveAccessInput implements GqlInputOf<ApproveAccessInput, "accessRequests", "approve"> {
  @Field(() => Int, { nullable: true, description: "Approve for less time than asked (minutes; default: as asked)" }) durationMinutes?: number;
  @Field(() => String, { nullable: true, description: 'Or as "1h", "30m"' }) duration?: string;
  @Field(() => String, { nullable: true }) reason?: string;
}

@InputType()
export class AccessPolicyInput implements GqlInputOf<AccessPolicyInput, "accessRequests", "setPolicy"> {
  @Field(() => Boolean, { nullable: true, description: "Default true" }) requestable?: boolean;
  @Field(() => ID, { nullable: true, description: "Only members of this department may ask" }) requesterDepartmentId?: string;
  @Field(() => Int) maxDurationMinutes: number;
  @Field(() => Boolean, { nullable: true, description: "Default true; false approves at once (on-call)" }) approvalRequired?: boolean;
}
