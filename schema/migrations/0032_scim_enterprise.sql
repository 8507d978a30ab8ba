ALTER TABLE "scim_users" ADD COLUMN "department_id" uuid;--> statement-breakpoint
ALTER TABLE "scim_users" ADD COLUMN "manager_id" uuid;--> statement-breakpoint
ALTER TABLE "scim_users" ADD CONSTRAINT "scim_users_department_id_departments_id_fk" FOREIGN KEY ("department_id") REFERENCES "public"."departments"("id") ON DELETE set null ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "scim_users" ADD CONSTRAINT "scim_users_manager_id_users_id_fk" FOREIGN KEY ("manager_id") REFERENCES "public"."users"("id") ON DELETE set null ON UPDATE no action;