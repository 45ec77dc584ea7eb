-- Instances keep the callers they have authenticated in memory (src/auth/caller-cache.ts) and
-- drop them when what a caller is built from changes: a key revoked, expired, re-hashed or
-- moved to another user; a user changed, moved or deleted; an organization renamed, its
-- subscription changed, or deleted. pg_notify is delivered at commit, to every listening
-- instance, and not at all on rollback; several in one transaction arrive once.
-- `last_used_at`, the one column the API writes, is not among the columns watched.
CREATE FUNCTION notify_caller_change() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  PERFORM pg_notify('caller_changed', TG_TABLE_NAME);
  RETURN NULL;
END
$$;

CREATE TRIGGER api_keys_caller_change
  AFTER UPDATE OF revoked_at, expires_at, hash, user_id OR DELETE OR TRUNCATE ON api_keys
  FOR EACH STATEMENT EXECUTE FUNCTION notify_caller_change();
CREATE TRIGGER users_caller_change
  AFTER UPDATE OF id, organization_id, email, name, created_at OR DELETE OR TRUNCATE ON users
  FOR EACH STATEMENT EXECUTE FUNCTION notify_caller_change();
CREATE TRIGGER organizations_caller_change
  AFTER UPDATE OF id, name, plan, subscription_status, current_period_end OR DELETE OR TRUNCATE ON organizations
  FOR EACH STATEMENT EXECUTE FUNCTION notify_caller_change();
