-- Old zone rule sets pruned once no instance reads them (issue 40, part 5). Each set is about
-- 3 MB, one per tzdata release an instance ran with, and stayed forever. An instance now says
-- every 10 minutes (and at start) that it still answers with its set (keep_zone_rules); a set
-- no instance has named for a day is deleted with its zones. An instance whose set was
-- deleted all the same (stopped for a day, then resumed) stores it again at its next mark,
-- or at its next analytics request, which answers 503 once (src/jobs/analytics/route.ts).
ALTER TABLE zone_rule_sets ADD COLUMN used_at timestamptz NOT NULL DEFAULT now();

-- Marks `set_id` as in use now, and deletes the sets no instance has marked for a day (never
-- `set_id`). Whether `set_id` is stored (false: the caller loads it). SECURITY DEFINER: the
-- API's role may call it.
CREATE FUNCTION keep_zone_rules(set_id text) RETURNS boolean
LANGUAGE plpgsql SECURITY DEFINER SET search_path = public, pg_temp AS $$
DECLARE
  kept boolean;
BEGIN
  UPDATE zone_rule_sets SET used_at = now() WHERE id = set_id;
  kept := FOUND;
  DELETE FROM zone_rule_sets WHERE used_at < now() - interval '1 day' AND id <> set_id;
  RETURN kept;
END
$$;
REVOKE EXECUTE ON FUNCTION keep_zone_rules(text) FROM PUBLIC;

DO $$
DECLARE
  r text;
BEGIN
  FOR r IN SELECT DISTINCT grantee FROM information_schema.role_routine_grants
           WHERE routine_schema = 'public' AND routine_name = 'load_zone_rules' AND privilege_type = 'EXECUTE' AND grantee <> current_user
  LOOP
    EXECUTE format('GRANT EXECUTE ON FUNCTION keep_zone_rules(text) TO %I', r);
  END LOOP;
END
$$;
