-- Every instance keeps each signed-in user's list of organizations (GET /auth/me) in memory. These
-- triggers announce every committed change to it on the "keyward_changes" channel (migration 0016),
-- whoever wrote it: "memberships:<user_id>" when a membership is added, changed or removed, and
-- "memberships:*" when an organization's name, slug or deletion changes (it shows in its members' lists).
CREATE OR REPLACE FUNCTION keyward_notify_memberships_changed() RETURNS trigger AS $$
BEGIN
  IF TG_TABLE_NAME = 'organizations' THEN
    PERFORM pg_notify('keyward_changes', 'memberships:*');
  ELSIF TG_OP = 'INSERT' THEN
    PERFORM pg_notify('keyward_changes', 'memberships:' || NEW.user_id::text);
  ELSE
    PERFORM pg_notify('keyward_changes', 'memberships:' || OLD.user_id::text);
    IF TG_OP = 'UPDATE' AND NEW.user_id IS DISTINCT FROM OLD.user_id THEN
      PERFORM pg_notify('keyward_changes', 'memberships:' || NEW.user_id::text);
    END IF;
  END IF;
  RETURN NULL;
END;
$$ LANGUAGE plpgsql;
--> statement-breakpoint
CREATE TRIGGER org_memberships_notify_changed
  AFTER INSERT OR UPDATE OR DELETE ON org_memberships
  FOR EACH ROW EXECUTE FUNCTION keyward_notify_memberships_changed();
--> statement-breakpoint
CREATE TRIGGER organizations_notify_memberships_changed
  AFTER UPDATE OF name, slug, deleted_at OR DELETE ON organizations
  FOR EACH ROW EXECUTE FUNCTION keyward_notify_memberships_changed();
