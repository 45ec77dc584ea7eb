-- A deleted job's unfolded deltas go with it, in its deletion's transaction. Until now they
-- stayed until the next fold dropped them (deltas have no foreign key: appending stays one
-- insert), and a job created again with the same id before that fold (a restore, a client
-- that chooses its ids) had them counted as its own, then folded into its summaries: its
-- figures were wrong for good. (Its summary rows go by their foreign key's cascade; the
-- cascaded deletion of its screens appends nothing, screens_append_summary_deltas.)
--
-- Locks: the deletion holds the job's row FOR UPDATE, which a writer's screen insert (the
-- foreign key's KEY SHARE) and the fold (FOR KEY SHARE SKIP LOCKED: it skips the job) cannot
-- take together with it, so no delta of the job is appended or folded meanwhile.
CREATE FUNCTION jobs_drop_summary_deltas() RETURNS trigger
LANGUAGE plpgsql AS $$
BEGIN
  DELETE FROM screen_summary_deltas d USING old_jobs o WHERE d.job_id = o.id;
  RETURN NULL;
END
$$;

CREATE TRIGGER jobs_drop_summary_deltas
  AFTER DELETE ON jobs REFERENCING OLD TABLE AS old_jobs
  FOR EACH STATEMENT EXECUTE FUNCTION jobs_drop_summary_deltas();
