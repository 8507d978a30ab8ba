CREATE TYPE "public"."ssh_user_key_type" AS ENUM('ed25519', 'ecdsa', 'rsa', 'sk-ed25519', 'sk-ecdsa');--> statement-breakpoint
ALTER TABLE "ssh_keys" ALTER COLUMN "key_type" SET DATA TYPE "public"."ssh_user_key_type" USING "key_type"::text::"public"."ssh_user_key_type";--> statement-breakpoint
ALTER TABLE "department_cert_policies" ADD COLUMN "require_hardware_key" boolean DEFAULT false NOT NULL;--> statement-breakpoint
ALTER TABLE "department_cert_policies" ADD COLUMN "require_touch" boolean DEFAULT false NOT NULL;--> statement-breakpoint
ALTER TABLE "department_cert_policies" ADD COLUMN "require_verify" boolean DEFAULT false NOT NULL;--> statement-breakpoint
ALTER TABLE "ssh_keys" ADD COLUMN "sk_proof_flags" smallint;