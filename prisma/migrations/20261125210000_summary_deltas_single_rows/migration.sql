-- Summaries' writers (issue 21): a single-row write, what an application sends, appends its
-- delta with a plan that has no aggregate. The statement triggers of
-- 20261123200000_summary_deltas grouped every statement's rows by (job, bucket), which keeps a
-- bulk load at one delta per job and bucket, but whose executor start-up (an aggregate of
-- seven sums over the transition tables, and for an update the union of both) was most of
-- what a single-row write paid for the summaries. Counted with callgrind (backend
-- instructions per single-row statement, triggers on ÷ off, docs/summaries-design.md):
--   insert a completed screen: 506k ÷ 350k (0.69) → 472k ÷ 349k (0.74)
--   update a score:            514k ÷ 308k (0.60) → 418k ÷ 306k (0.73)
--
-- Inserts: still a statement trigger (a bulk load of a million screens appends about eleven
-- thousand deltas, not a million), which appends a one-row statement's delta without the
-- aggregate. Updates: a row trigger. The statement trigger's transition tables and their join
-- cost a one-row update more than a row trigger's call (456k against 417k); a multi-row
-- update appends one delta per changed screen (two when a screen changes job or bucket),
-- which the fold sums like any other. Deletes: unchanged (a job's deletion cascades to its
-- screens, one statement, which the statement trigger skips in one query).
--
-- Every function and trigger as the migrations leave them: prisma/current-functions.sql.

-- No write of screens may fall between the update trigger's removal and its replacement. The
-- lock DROP TRIGGER needs, first; held for the instant the statements below take (the
-- migration runner sets a lock_timeout and retries, so a long transaction on screens delays
-- this migration, never the API).
LOCK TABLE screens IN ACCESS EXCLUSIVE MODE;

-- Inserts and deletes: one statement's net change per (job, bucket), appended. Scores are
-- summed exactly as the doubles they are (`score::text` with extra_float_digits above 0, set
-- here whatever the writer's session says). The deletes of a deleted job's screens, which its
-- cascade runs, append nothing: its summaries went with it.
CREATE OR REPLACE FUNCTION screens_append_summary_deltas() RETURNS trigger
LANGUAGE plpgsql SET extra_float_digits = 3 AS $$
BEGIN
  IF TG_OP = 'INSERT' THEN
    -- At most one row: its delta as it is, with no aggregate to start.
    PERFORM FROM new_screens OFFSET 1;
    IF NOT FOUND THEN
      INSERT INTO screen_summary_deltas (job_id, bucket, in_progress, completed, expired, scored, score_sum, changed_at)
      SELECT s.job_id, CASE WHEN s.status = 'completed' THEN completion_bucket(s.completed_at) END,
             (s.status = 'in_progress')::int, (s.status = 'completed')::int, (s.status = 'expired')::int,
             (s.status = 'completed' AND s.score IS NOT NULL)::int,
             CASE WHEN s.status = 'completed' THEN coalesce(s.score::text::numeric, 0) ELSE 0 END, summaries_clock()
      FROM new_screens s;
      RETURN NULL;
    END IF;
    INSERT INTO screen_summary_deltas (job_id, bucket, in_progress, completed, expired, scored, score_sum, changed_at)
    SELECT s.job_id, CASE WHEN s.status = 'completed' THEN completion_bucket(s.completed_at) END,
           count(*) FILTER (WHERE s.status = 'in_progress'), count(*) FILTER (WHERE s.status = 'completed'),
           count(*) FILTER (WHERE s.status = 'expired'), count(s.score) FILTER (WHERE s.status = 'completed'),
           coalesce(sum(s.score::text::numeric) FILTER (WHERE s.status = 'completed'), 0), summaries_clock()
    FROM new_screens s
    GROUP BY 1, 2;
  ELSIF TG_OP = 'DELETE' THEN
    INSERT INTO screen_summary_deltas (job_id, bucket, in_progress, completed, expired, scored, score_sum, changed_at)
    SELECT s.job_id, CASE WHEN s.status = 'completed' THEN completion_bucket(s.completed_at) END,
           -count(*) FILTER (WHERE s.status = 'in_progress'), -count(*) FILTER (WHERE s.status = 'completed'),
           -count(*) FILTER (WHERE s.status = 'expired'), -count(s.score) FILTER (WHERE s.status = 'completed'),
           -coalesce(sum(s.score::text::numeric) FILTER (WHERE s.status = 'completed'), 0), summaries_clock()
    FROM old_screens s
    WHERE EXISTS (SELECT 1 FROM jobs j WHERE j.id = s.job_id)
    GROUP BY 1, 2;
  ELSE
    RAISE EXCEPTION 'screens_append_summary_deltas() is for INSERT and DELETE; updates have screens_append_update_delta()';
  END IF;
  RETURN NULL;
END
$$;

-- Updates, row by row: what the change does to the summaries, appended; nothing when it does
-- nothing to them (another column, a score or status change of a screen that is not
-- completed and stays so, a completion moved within its bucket). A score changed in place, the
-- usual update, is one delta; a change of job, status or bucket takes the screen out of its
-- old place and puts it in its new one, two.
CREATE FUNCTION screens_append_update_delta() RETURNS trigger
LANGUAGE plpgsql SET extra_float_digits = 3 AS $$
DECLARE
  bucket timestamptz;
BEGIN
  IF NEW.job_id = OLD.job_id AND NEW.status = OLD.status THEN
    IF NEW.status <> 'completed' THEN
      RETURN NULL;
    END IF;
    bucket := completion_bucket(NEW.completed_at);
    IF bucket = completion_bucket(OLD.completed_at) THEN
      IF NEW.score IS NOT DISTINCT FROM OLD.score THEN
        RETURN NULL;
      END IF;
      INSERT INTO screen_summary_deltas (job_id, bucket, in_progress, completed, expired, scored, score_sum, changed_at)
      VALUES (NEW.job_id, bucket, 0, 0, 0, (NEW.score IS NOT NULL)::int - (OLD.score IS NOT NULL)::int,
              coalesce(NEW.score::text::numeric, 0) - coalesce(OLD.score::text::numeric, 0), summaries_clock());
      RETURN NULL;
    END IF;
  END IF;
  INSERT INTO screen_summary_deltas (job_id, bucket, in_progress, completed, expired, scored, score_sum, changed_at)
  VALUES (OLD.job_id, CASE WHEN OLD.status = 'completed' THEN completion_bucket(OLD.completed_at) END,
          -(OLD.status = 'in_progress')::int, -(OLD.status = 'completed')::int, -(OLD.status = 'expired')::int,
          -(OLD.status = 'completed' AND OLD.score IS NOT NULL)::int,
          CASE WHEN OLD.status = 'completed' THEN -coalesce(OLD.score::text::numeric, 0) ELSE 0 END, summaries_clock());
  INSERT INTO screen_summary_deltas (job_id, bucket, in_progress, completed, expired, scored, score_sum, changed_at)
  VALUES (NEW.job_id, CASE WHEN NEW.status = 'completed' THEN completion_bucket(NEW.completed_at) END,
          (NEW.status = 'in_progress')::int, (NEW.status = 'completed')::int, (NEW.status = 'expired')::int,
          (NEW.status = 'completed' AND NEW.score IS NOT NULL)::int,
          CASE WHEN NEW.status = 'completed' THEN coalesce(NEW.score::text::numeric, 0) ELSE 0 END, summaries_clock());
  RETURN NULL;
END
$$;

DROP TRIGGER screens_summary_deltas_update ON screens;
CREATE TRIGGER screens_summary_deltas_update
  AFTER UPDATE ON screens
  FOR EACH ROW EXECUTE FUNCTION screens_append_update_delta();
