CREATE TABLE "scim_activity" (
	"api_key_id" uuid PRIMARY KEY NOT NULL,
	"organization_id" uuid NOT NULL,
	"last_request_at" timestamp with time zone NOT NULL,
	"last_request" varchar(255) NOT NULL,
	"last_write_at" timestamp with time zone,
	"last_write" varchar(255),
	"last_error_at" timestamp with time zone,
	"last_error_status" integer,
	"last_error_scim_type" varchar(32),
	"last_error_detail" text,
	"last_error_request" varchar(255)
);
--> statement-breakpoint
ALTER TABLE "scim_activity" ADD CONSTRAINT "scim_activity_api_key_id_api_keys_id_fk" FOREIGN KEY ("api_key_id") REFERENCES "public"."api_keys"("id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "scim_activity" ADD CONSTRAINT "scim_activity_organization_id_organizations_id_fk" FOREIGN KEY ("organization_id") REFERENCES "public"."organizations"("id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
CREATE INDEX "scim_activity_org_idx" ON "scim_activity" USING btree ("organization_id");