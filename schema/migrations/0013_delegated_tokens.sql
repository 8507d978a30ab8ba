ALTER TABLE "oidc_clients" ALTER COLUMN "organization_id" DROP NOT NULL;--> statement-breakpoint
ALTER TABLE "oidc_clients" ADD COLUMN "built_in" boolean DEFAULT false NOT NULL;--> statement-breakpoint
ALTER TABLE "oidc_clients" ADD COLUMN "allowed_api_scopes" text[] DEFAULT '{}'::text[] NOT NULL;--> statement-breakpoint
CREATE INDEX "oidc_payloads_account_idx" ON "oidc_payloads" USING btree (("payload"->>'accountId'));