CREATE TABLE "audit_chain_anchors" (
	"chain" varchar(64) NOT NULL,
	"kind" varchar(8) NOT NULL,
	"seq" bigint NOT NULL,
	"hash" varchar(64) NOT NULL,
	"signed_at" timestamp with time zone NOT NULL,
	"key_id" varchar(64) NOT NULL,
	"signature" text NOT NULL,
	CONSTRAINT "audit_chain_anchors_chain_kind_pk" PRIMARY KEY("chain","kind")
);
--> statement-breakpoint
CREATE TABLE "audit_signing_keys" (
	"kid" varchar(64) PRIMARY KEY NOT NULL,
	"public_key" text NOT NULL,
	"private_key_sealed" text NOT NULL,
	"created_at" timestamp with time zone DEFAULT now() NOT NULL
);
--> statement-breakpoint
ALTER TABLE "audit_logs" ADD COLUMN "seq" bigint;--> statement-breakpoint
ALTER TABLE "audit_logs" ADD COLUMN "prev_hash" varchar(64);--> statement-breakpoint
ALTER TABLE "audit_logs" ADD COLUMN "hash" varchar(64);--> statement-breakpoint
ALTER TABLE "audit_logs" ADD COLUMN "org_seq" bigint;--> statement-breakpoint
ALTER TABLE "audit_logs" ADD COLUMN "org_prev_hash" varchar(64);--> statement-breakpoint
ALTER TABLE "audit_logs" ADD COLUMN "org_hash" varchar(64);--> statement-breakpoint
CREATE INDEX "audit_logs_seq_idx" ON "audit_logs" USING btree ("seq") WHERE "audit_logs"."seq" is not null;--> statement-breakpoint
CREATE INDEX "audit_logs_org_seq_idx" ON "audit_logs" USING btree ("organization_id","org_seq") WHERE "audit_logs"."org_seq" is not null;--> statement-breakpoint
CREATE INDEX "audit_logs_unchained_idx" ON "audit_logs" USING btree ("created_at","id") WHERE "audit_logs"."seq" is null;--> statement-breakpoint
-- Still append-only, with two narrow exceptions: the chain job fills a record's chain columns once
-- (every other column unchanged), and pruning (a transaction that sets keyward.audit_prune) deletes
-- chained records past the retention after writing a signed checkpoint. Tampering beyond that is
-- what the hash chain and its signed heads exist to reveal.
CREATE OR REPLACE FUNCTION audit_logs_refuse_change() RETURNS trigger AS $$
BEGIN
  IF TG_OP = 'UPDATE' AND OLD.seq IS NULL AND NEW.seq IS NOT NULL
     AND (NEW.id, NEW.created_at, NEW.action, NEW.actor_id, NEW.user_id, NEW.organization_id, NEW.resource_type,
          NEW.resource_id, NEW.success, NEW.ip_address, NEW.user_agent, NEW.request_id, NEW.metadata, NEW.error_message)
       IS NOT DISTINCT FROM
         (OLD.id, OLD.created_at, OLD.action, OLD.actor_id, OLD.user_id, OLD.organization_id, OLD.resource_type,
          OLD.resource_id, OLD.success, OLD.ip_address, OLD.user_agent, OLD.request_id, OLD.metadata, OLD.error_message) THEN
    RETURN NEW;
  END IF;
  IF TG_OP = 'DELETE' AND OLD.seq IS NOT NULL AND current_setting('keyward.audit_prune', true) = 'on' THEN
    RETURN OLD;
  END IF;
  RAISE EXCEPTION 'audit_logs is append-only';
END;
$$ LANGUAGE plpgsql;
