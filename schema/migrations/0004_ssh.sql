CREATE TYPE "public"."ca_type" AS ENUM('user', 'host');--> statement-breakpoint
CREATE TYPE "public"."cert_type" AS ENUM('user', 'host');--> statement-breakpoint
CREATE TYPE "public"."ssh_key_type" AS ENUM('ed25519', 'ecdsa', 'rsa');--> statement-breakpoint
CREATE SEQUENCE "public"."ssh_cert_serial_seq" INCREMENT BY 1 MINVALUE 1 MAXVALUE 9223372036854775807 START WITH 1000 CACHE 1;--> statement-breakpoint
CREATE TABLE "ca_keys" (
	"id" uuid PRIMARY KEY DEFAULT gen_random_uuid() NOT NULL,
	"ca_id" uuid NOT NULL,
	"key_type" "ssh_key_type" NOT NULL,
	"public_key" text NOT NULL,
	"fingerprint" varchar(128) NOT NULL,
	"private_key_sealed" text NOT NULL,
	"is_active" boolean DEFAULT true NOT NULL,
	"rotated_at" timestamp with time zone,
	"rotation_reason" text,
	"trusted_until" timestamp with time zone,
	"created_at" timestamp with time zone DEFAULT now() NOT NULL
);
--> statement-breakpoint
CREATE TABLE "certificate_audit_logs" (
	"id" uuid PRIMARY KEY DEFAULT gen_random_uuid() NOT NULL,
	"created_at" timestamp with time zone DEFAULT now() NOT NULL,
	"organization_id" uuid,
	"certificate_id" uuid,
	"user_id" uuid,
	"action" varchar(50) NOT NULL,
	"success" boolean DEFAULT true NOT NULL,
	"message" text,
	"ip_address" varchar(45),
	"user_agent" text,
	"request_id" varchar(128),
	"metadata" jsonb DEFAULT '{}'::jsonb NOT NULL
);
--> statement-breakpoint
CREATE TABLE "certificate_authorities" (
	"id" uuid PRIMARY KEY DEFAULT gen_random_uuid() NOT NULL,
	"organization_id" uuid NOT NULL,
	"name" varchar(255) NOT NULL,
	"description" text,
	"ca_type" "ca_type" NOT NULL,
	"default_validity_hours" integer NOT NULL,
	"max_validity_hours" integer NOT NULL,
	"created_by" uuid,
	"created_at" timestamp with time zone DEFAULT now() NOT NULL,
	"updated_at" timestamp with time zone DEFAULT now() NOT NULL,
	"deleted_at" timestamp with time zone
);
--> statement-breakpoint
CREATE TABLE "org_krls" (
	"organization_id" uuid PRIMARY KEY NOT NULL,
	"version" bigint NOT NULL,
	"krl" "bytea" NOT NULL,
	"generated_at" timestamp with time zone NOT NULL
);
--> statement-breakpoint
CREATE TABLE "ssh_certificates" (
	"id" uuid PRIMARY KEY DEFAULT gen_random_uuid() NOT NULL,
	"organization_id" uuid NOT NULL,
	"ca_id" uuid NOT NULL,
	"ca_key_id" uuid NOT NULL,
	"user_id" uuid,
	"ssh_key_id" uuid,
	"cert_type" "cert_type" NOT NULL,
	"serial" bigint NOT NULL,
	"key_id" text NOT NULL,
	"principals" text[] NOT NULL,
	"extensions" text[] NOT NULL,
	"critical_options" jsonb DEFAULT '{}'::jsonb NOT NULL,
	"valid_after" timestamp with time zone NOT NULL,
	"valid_before" timestamp with time zone NOT NULL,
	"public_key_fingerprint" varchar(128) NOT NULL,
	"certificate" text NOT NULL,
	"revoked_at" timestamp with time zone,
	"revoke_reason" text,
	"revoked_by" uuid,
	"request_ip" varchar(45),
	"request_user_agent" text,
	"created_at" timestamp with time zone DEFAULT now() NOT NULL
);
--> statement-breakpoint
CREATE TABLE "ssh_keys" (
	"id" uuid PRIMARY KEY DEFAULT gen_random_uuid() NOT NULL,
	"user_id" uuid NOT NULL,
	"public_key" text NOT NULL,
	"fingerprint" varchar(128) NOT NULL,
	"key_type" "ssh_key_type" NOT NULL,
	"key_bits" integer NOT NULL,
	"key_comment" text,
	"description" text,
	"verified_at" timestamp with time zone,
	"verify_text" text,
	"verify_text_created_at" timestamp with time zone,
	"created_at" timestamp with time zone DEFAULT now() NOT NULL,
	"updated_at" timestamp with time zone DEFAULT now() NOT NULL,
	"deleted_at" timestamp with time zone
);
--> statement-breakpoint
ALTER TABLE "ca_keys" ADD CONSTRAINT "ca_keys_ca_id_certificate_authorities_id_fk" FOREIGN KEY ("ca_id") REFERENCES "public"."certificate_authorities"("id") ON DELETE no action ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "certificate_authorities" ADD CONSTRAINT "certificate_authorities_organization_id_organizations_id_fk" FOREIGN KEY ("organization_id") REFERENCES "public"."organizations"("id") ON DELETE no action ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "certificate_authorities" ADD CONSTRAINT "certificate_authorities_created_by_users_id_fk" FOREIGN KEY ("created_by") REFERENCES "public"."users"("id") ON DELETE no action ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "org_krls" ADD CONSTRAINT "org_krls_organization_id_organizations_id_fk" FOREIGN KEY ("organization_id") REFERENCES "public"."organizations"("id") ON DELETE no action ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "ssh_certificates" ADD CONSTRAINT "ssh_certificates_organization_id_organizations_id_fk" FOREIGN KEY ("organization_id") REFERENCES "public"."organizations"("id") ON DELETE no action ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "ssh_certificates" ADD CONSTRAINT "ssh_certificates_ca_id_certificate_authorities_id_fk" FOREIGN KEY ("ca_id") REFERENCES "public"."certificate_authorities"("id") ON DELETE no action ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "ssh_certificates" ADD CONSTRAINT "ssh_certificates_ca_key_id_ca_keys_id_fk" FOREIGN KEY ("ca_key_id") REFERENCES "public"."ca_keys"("id") ON DELETE no action ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "ssh_certificates" ADD CONSTRAINT "ssh_certificates_user_id_users_id_fk" FOREIGN KEY ("user_id") REFERENCES "public"."users"("id") ON DELETE no action ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "ssh_certificates" ADD CONSTRAINT "ssh_certificates_ssh_key_id_ssh_keys_id_fk" FOREIGN KEY ("ssh_key_id") REFERENCES "public"."ssh_keys"("id") ON DELETE no action ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "ssh_certificates" ADD CONSTRAINT "ssh_certificates_revoked_by_users_id_fk" FOREIGN KEY ("revoked_by") REFERENCES "public"."users"("id") ON DELETE no action ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "ssh_keys" ADD CONSTRAINT "ssh_keys_user_id_users_id_fk" FOREIGN KEY ("user_id") REFERENCES "public"."users"("id") ON DELETE no action ON UPDATE no action;--> statement-breakpoint
CREATE UNIQUE INDEX "ca_keys_one_active_uq" ON "ca_keys" USING btree ("ca_id") WHERE "ca_keys"."is_active";--> statement-breakpoint
CREATE INDEX "ca_keys_ca_idx" ON "ca_keys" USING btree ("ca_id");--> statement-breakpoint
CREATE INDEX "certificate_audit_logs_org_idx" ON "certificate_audit_logs" USING btree ("organization_id","created_at","id");--> statement-breakpoint
CREATE UNIQUE INDEX "certificate_authorities_org_type_live_uq" ON "certificate_authorities" USING btree ("organization_id","ca_type") WHERE "certificate_authorities"."deleted_at" is null;--> statement-breakpoint
CREATE UNIQUE INDEX "ssh_certificates_ca_serial_uq" ON "ssh_certificates" USING btree ("ca_id","serial");--> statement-breakpoint
CREATE INDEX "ssh_certificates_user_idx" ON "ssh_certificates" USING btree ("user_id","created_at");--> statement-breakpoint
CREATE INDEX "ssh_certificates_org_idx" ON "ssh_certificates" USING btree ("organization_id","created_at");--> statement-breakpoint
CREATE INDEX "ssh_certificates_org_serial_idx" ON "ssh_certificates" USING btree ("organization_id","serial");--> statement-breakpoint
CREATE UNIQUE INDEX "ssh_keys_user_fingerprint_live_uq" ON "ssh_keys" USING btree ("user_id","fingerprint") WHERE "ssh_keys"."deleted_at" is null;