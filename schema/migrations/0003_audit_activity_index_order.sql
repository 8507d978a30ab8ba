DROP INDEX "audit_logs_org_idx";--> statement-breakpoint
DROP INDEX "audit_logs_org_user_idx";--> statement-breakpoint
DROP INDEX "audit_logs_org_action_idx";--> statement-breakpoint
CREATE INDEX "audit_logs_org_idx" ON "audit_logs" USING btree ("organization_id","created_at","id");--> statement-breakpoint
CREATE INDEX "audit_logs_org_user_idx" ON "audit_logs" USING btree ("organization_id","user_id","created_at","id");--> statement-breakpoint
CREATE INDEX "audit_logs_org_action_idx" ON "audit_logs" USING btree ("organization_id","action","created_at","id");