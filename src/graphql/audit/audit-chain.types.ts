import { Field, ID, Int, ObjectType } from "type-graphql";
import type { ChainBreak, ChainCheck, ChainReport, VerifyReport } from "../../modules/audit/index.js";

@ObjectType({ description: "The first broken link of an audit chain" })
export class AuditChainBreak implements ChainBreak {
  @Field(() => String, { description: "\"global\" or an organization id" }) chain: string;
  @Field(() => String, { description: "edited, deleted, inserted, reordered or bad_signature" }) kind: ChainBreak["kind"];
  @Field(() => Int) seq: number;
  @Field(() => ID, { nullable: true, description: "The record found at the break (null: none)" }) recordId: string | null;
  @Field(() => String) detail: string;
}

@ObjectType({ description: "One audit chain, verified from its signed checkpoint to its signed head" })
export class AuditChainReport implements ChainReport {
  @Field(() => String) chain: string;
  @Field(() => Boolean) ok: boolean;
  @Field(() => Int, { description: "Where verification started: the pruning checkpoint's seq (0: the start)" }) fromSeq: number;
  @Field(() => Int) headSeq: number;
  @Field(() => Int) records: number;
  @Field(() => AuditChainBreak, { nullable: true }) break: AuditChainBreak | null;
}

@ObjectType({ description: "Verification of the global audit chain and every organization's" })
export class AuditVerification implements VerifyReport {
  @Field(() => Boolean) ok: boolean;
  @Field(() => Date) checkedAt: Date;
  @Field(() => AuditChainReport) global: AuditChainReport;
  @Field(() => Int) organizationsChecked: number;
  @Field(() => [AuditChainReport]) brokenOrganizations: AuditChainReport[];
  @Field(() => AuditChainBreak, { nullable: true }) firstBreak: AuditChainBreak | null;
  @Field(() => Int, { description: "Records not chained yet (the chain job runs every AUDIT_CHAIN_INTERVAL_MS)" }) unchained: number;
}

@ObjectType({ description: "An organization's audit chain as last verified, by its admins or an operator" })
export class AuditChainCheck extends AuditChainReport implements ChainCheck {
  @Field(() => Date) checkedAt: Date;
}
