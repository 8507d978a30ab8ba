-- Issue 12: an address counts as verified only when its owner proved it.
-- Addresses that an organization admin marked verified (not a superadmin) were never proven: unverify them.
UPDATE "users" AS u SET "email_verified_at" = NULL
WHERE u."email_verified_at" IS NOT NULL
  AND EXISTS (
    SELECT 1 FROM "audit_logs" AS a JOIN "users" AS actor ON actor."id" = a."actor_id"
    WHERE a."action" = 'admin.email.verify' AND a."user_id" = u."id" AND NOT actor."is_superadmin"
  );--> statement-breakpoint
-- A used mailed link (verification, reset, activation) or an accepted invitation proved the address.
UPDATE "users" AS u SET "email_verified_via" = 'email_link'
WHERE u."email_verified_at" IS NOT NULL
  AND (EXISTS (SELECT 1 FROM "user_tokens" AS t WHERE t."user_id" = u."id" AND t."used_at" IS NOT NULL)
    OR EXISTS (SELECT 1 FROM "org_invites" AS i WHERE i."accepted_by" = u."id"));--> statement-breakpoint
-- Otherwise a provider's verified claim did, if one is linked. Anything else stays NULL: verified, proof unknown.
UPDATE "users" AS u SET "email_verified_via" = 'provider'
WHERE u."email_verified_at" IS NOT NULL AND u."email_verified_via" IS NULL
  AND EXISTS (SELECT 1 FROM "external_identities" AS e WHERE e."user_id" = u."id" AND e."email_verified");
