-- The floor: what any design that records a write in the writer's transaction pays at
-- least, measured rather than argued. A row trigger (the cheapest hook PL/pgSQL has) that
-- appends a constant row, computed from nothing, into a table shaped and indexed like the
-- deltas (job_id, id), whose index a reader needs to find a job's rows. Read by
-- bench/writes.ts and bench/fold-cost.sh.
CREATE TABLE bench_write_floor (LIKE screen_summary_deltas INCLUDING DEFAULTS INCLUDING INDEXES);
CREATE FUNCTION bench_write_floor () RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  INSERT INTO bench_write_floor (job_id, bucket, in_progress, completed, expired, scored, score_sum, changed_at)
  VALUES (NEW.job_id, NULL, 0, 0, 0, 0, 0, 0);
  RETURN NULL;
END $$;
CREATE TRIGGER bench_write_floor AFTER INSERT OR UPDATE ON screens FOR EACH ROW EXECUTE FUNCTION bench_write_floor();
