import { Field, ID, InputType, Int, ObjectType } from "type-graphql";
import type { AccountName as AccountNameView, GlobalKillSwitchPreview as PreviewView, GlobalKillSwitchView } from "../../modules/networks/index.js";
import type { GqlInputOf } from "../common/inputs.js";
import { Paged } from "../common/paged.js";
import type { ViewOf } from "../common/views.js";

@ObjectType({ description: "An account named in a listing (deleted ones too: records outlive them)" })
export class AccountName implements AccountNameView {
  @Field(() => ID) id: string;
  @Field(() => String) email: string;
  @Field(() => String, { nullable: true }) fullName: string | null;
  @Field(() => Boolean) deleted: boolean;
}

type AdminOrganizationView = ViewOf<"allOrganizations", "list">["items"][number];

@ObjectType({ description: "An organization as an operator sees it: whoever its members are" })
export class AdminOrganization implements AdminOrganizationView {
  @Field(() => ID) id: string;
  @Field(() => String) name: string;
  @Field(() => String) slug: string;
  @Field(() => String, { nullable: true }) description: string | null;
  @Field(() => Int) memberCount: number;
  @Field(() => [AccountName]) owners: AccountName[];
  @Field(() => Date) createdAt: Date;
}

@ObjectType()
export class AdminOrganizationPage extends Paged(AdminOrganization) {}

@ObjectType()
export class OrganizationName {
  @Field(() => ID) id: string;
  @Field(() => String) name: string;
  @Field(() => String) slug: string;
}

@ObjectType({ description: "Names of accounts and organizations by id (ids that name nothing are left out)" })
export class AdminLookup implements ViewOf<"operators", "lookup"> {
  @Field(() => [AccountName]) users: AccountName[];
  @Field(() => [OrganizationName]) organizations: OrganizationName[];
}

@ObjectType({ description: "A global kill switch: one person cut off every network of every organization" })
export class GlobalKillSwitch implements GlobalKillSwitchView {
  @Field(() => ID) id: string;
  @Field(() => AccountName) target: AccountName;
  @Field(() => String, { nullable: true }) reason: string | null;
  @Field(() => Int) sessionsEnded: number;
  @Field(() => Date) createdAt: Date;
  @Field(() => AccountName, { nullable: true }) triggeredBy: AccountName | null;
  @Field(() => Date, { nullable: true, description: "Null while it is in force" }) liftedAt: Date | null;
  @Field(() => AccountName, { nullable: true }) liftedBy: AccountName | null;
}

@ObjectType()
export class GlobalKillSwitchPage extends Paged(GlobalKillSwitch) {}

@ObjectType()
export class GlobalKillSwitchPayload implements ViewOf<"globalKillSwitch", "trigger"> {
  @Field(() => GlobalKillSwitch) event: GlobalKillSwitch;
  @Field(() => Boolean, { description: "False when a controller could not be reached: reconciliation finishes the deauthorization" }) controllerSynced: boolean;
}

@ObjectType()
export class KillSwitchPerson {
  @Field(() => ID) id: string;
  @Field(() => String) email: string;
  @Field(() => String, { nullable: true }) fullName: string | null;
}

@ObjectType({ description: "A device of the person on a network of an organization" })
export class KillSwitchReach {
  @Field(() => String) organizationName: string;
  @Field(() => String) networkName: string;
  @Field(() => String) deviceName: string;
  @Field(() => String) state: string;
  @Field(() => Date, { nullable: true, description: "Set while an activation runs: when it would end" }) activeUntil: Date | null;
}

@ObjectType({ description: "What a global kill switch on a person would cut" })
export class GlobalKillSwitchPreview implements PreviewView {
  @Field(() => KillSwitchPerson) person: KillSwitchPerson;
  @Field(() => ID, { nullable: true, description: "The global kill switch already in force on the person" }) inForceEventId: string | null;
  @Field(() => [KillSwitchReach]) memberships: KillSwitchReach[];
}

@InputType()
export class GlobalKillSwitchInput implements GqlInputOf<GlobalKillSwitchInput, "globalKillSwitch", "trigger"> {
  @Field(() => ID) targetUserId: string;
  @Field(() => String, { nullable: true, description: "Kept in the history and the audit log" }) reason?: string;
}
