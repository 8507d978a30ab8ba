-- Every instance keeps recently read account profiles in memory (the signed-in caller and GET me).
-- These triggers tell every instance, through NOTIFY on the "keyward_changes" channel, the moment a
-- change that such a profile shows commits: whatever wrote it (a service, a cascade, an operator's
-- SQL). Payloads: "user:<id>", or "user:*" when an organization's name or deletion changes (the
-- profile names the organization managing the account). NOTIFY is delivered at commit only.
CREATE OR REPLACE FUNCTION keyward_notify_user_changed() RETURNS trigger AS $$
BEGIN
  IF TG_TABLE_NAME = 'organizations' THEN
    PERFORM pg_notify('keyward_changes', 'user:*');
  ELSIF TG_OP = 'INSERT' THEN
    PERFORM pg_notify('keyward_changes', 'user:' || NEW.user_id::text);
  ELSIF TG_TABLE_NAME = 'users' THEN
    PERFORM pg_notify('keyward_changes', 'user:' || OLD.id::text);
  ELSE
    PERFORM pg_notify('keyward_changes', 'user:' || OLD.user_id::text);
  END IF;
  RETURN NULL;
END;
$$ LANGUAGE plpgsql;
--> statement-breakpoint
CREATE TRIGGER users_notify_changed
  AFTER UPDATE OR DELETE ON users
  FOR EACH ROW EXECUTE FUNCTION keyward_notify_user_changed();
--> statement-breakpoint
-- Whether an account has a password is part of its profile; a new hash for the same account is not.
CREATE TRIGGER password_credentials_notify_changed
  AFTER INSERT OR DELETE ON password_credentials
  FOR EACH ROW EXECUTE FUNCTION keyward_notify_user_changed();
--> statement-breakpoint
CREATE TRIGGER organizations_notify_changed
  AFTER UPDATE OF name, deleted_at OR DELETE ON organizations
  FOR EACH ROW EXECUTE FUNCTION keyward_notify_user_changed();
