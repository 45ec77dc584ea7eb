-- A copy's log started over no longer sets pruned_through to the current transaction. A token
-- made after the adoption has an xmin no newer than the oldest transaction then running in
-- the whole cluster: while one older than the adoption ran (another database's, a pg_dump), every
-- new token answered 410, and a partner walked again and again. The generation and the
-- history already expire every token made before; the rows deleted were committed before any
-- later token's snapshot, which saw them. The horizon of this history starts at nothing pruned.
CREATE OR REPLACE FUNCTION public.adopt_database_history()
 RETURNS boolean
 LANGUAGE plpgsql
 SECURITY DEFINER
 SET search_path TO 'public', 'pg_temp'
 SET "screening.change_log_upkeep" TO 'on'
AS $function$
BEGIN
  IF (SELECT history FROM job_changes_horizon) IS NOT DISTINCT FROM database_history() THEN RETURN false; END IF;
  DELETE FROM job_changes;
  UPDATE job_changes_horizon SET pruned_through = '0'::xid8, history = database_history(),
    generation = ((generation::bigint + 1 + floor(random() * 2147483646)::bigint) % 2147483647)::int;
  RETURN true;
END
$function$;
