-- Every instance keeps the OIDC clients the provider reads on each request in memory (with their
-- secrets unsealed). These triggers announce every committed change to a client on the
-- "keyward_changes" channel (migration 0016), whoever wrote it: "client:<client_id>", or "client:*"
-- when an organization is deleted (its clients stop with it).
CREATE OR REPLACE FUNCTION keyward_notify_client_changed() RETURNS trigger AS $$
BEGIN
  IF TG_TABLE_NAME = 'organizations' THEN
    PERFORM pg_notify('keyward_changes', 'client:*');
  ELSE
    PERFORM pg_notify('keyward_changes', 'client:' || OLD.client_id);
  END IF;
  RETURN NULL;
END;
$$ LANGUAGE plpgsql;
--> statement-breakpoint
CREATE TRIGGER oidc_clients_notify_changed
  AFTER UPDATE OR DELETE ON oidc_clients
  FOR EACH ROW EXECUTE FUNCTION keyward_notify_client_changed();
--> statement-breakpoint
CREATE TRIGGER organizations_notify_clients_changed
  AFTER UPDATE OF deleted_at OR DELETE ON organizations
  FOR EACH ROW EXECUTE FUNCTION keyward_notify_client_changed();
