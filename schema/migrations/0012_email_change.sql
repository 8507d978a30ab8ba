ALTER TYPE "public"."user_token_purpose" ADD VALUE 'email_change';--> statement-breakpoint
ALTER TABLE "user_tokens" ADD COLUMN "new_email" varchar(320);