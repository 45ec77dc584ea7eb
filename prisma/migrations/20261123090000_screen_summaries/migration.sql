-- Summaries of screens (issue 13): per-job counts and per-segment completion figures, kept
-- by triggers on screens, read by get job, the list and analytics instead of the screens.

-- CreateTable
CREATE TABLE "job_screen_stats" (
    "job_id" UUID NOT NULL,
    "slot" SMALLINT NOT NULL,
    "in_progress" INTEGER NOT NULL DEFAULT 0,
    "completed" INTEGER NOT NULL DEFAULT 0,
    "expired" INTEGER NOT NULL DEFAULT 0,
    "scored" INTEGER NOT NULL DEFAULT 0,
    "score_sum" DECIMAL NOT NULL DEFAULT 0,

    CONSTRAINT "job_screen_stats_pkey" PRIMARY KEY ("job_id","slot")
);

-- CreateTable
CREATE TABLE "job_completion_segments" (
    "job_id" UUID NOT NULL,
    "segment" TIMESTAMPTZ NOT NULL,
    "slot" SMALLINT NOT NULL,
    "completed" INTEGER NOT NULL DEFAULT 0,
    "scored" INTEGER NOT NULL DEFAULT 0,
    "score_sum" DECIMAL NOT NULL DEFAULT 0,

    CONSTRAINT "job_completion_segments_pkey" PRIMARY KEY ("job_id","segment","slot")
);

-- AddForeignKey
ALTER TABLE "job_screen_stats" ADD CONSTRAINT "job_screen_stats_job_id_fkey" FOREIGN KEY ("job_id") REFERENCES "jobs"("id") ON DELETE CASCADE ON UPDATE CASCADE;

-- AddForeignKey
ALTER TABLE "job_completion_segments" ADD CONSTRAINT "job_completion_segments_job_id_fkey" FOREIGN KEY ("job_id") REFERENCES "jobs"("id") ON DELETE CASCADE ON UPDATE CASCADE;

-- Everything below is what Prisma cannot express: the summaries' upkeep. The design, the
-- alternatives weighed and what a prototype measured: docs/summaries-design.md.

-- The start of the span of UTC time that a completion at `t` is summarised in. A local week
-- starts on Monday 00:00 local time; for every UTC offset from -12:00 to +14:00 that instant
-- lies between Sunday 10:00 and Monday 12:00 UTC. So a UTC week is cut into one coarse
-- segment [Monday 12:00, Sunday 10:00), inside one local week in every zone, and 15-minute
-- buckets over the 26 hours around the boundary: every zone's offset since the 1970s is a
-- multiple of 15 minutes, so no bucket straddles a local week boundary. Before 1980, when
-- some offsets were not, a completion is its own segment. 2000-01-03 is a Monday.
CREATE FUNCTION completion_segment(t timestamptz) RETURNS timestamptz
LANGUAGE sql IMMUTABLE STRICT PARALLEL SAFE AS $$
  SELECT CASE
    WHEN t < timestamptz '1980-01-01 00:00+00' THEN t
    WHEN t - date_bin('7 days', t, timestamptz '2000-01-03 12:00+00') < interval '5 days 22 hours'
      THEN date_bin('7 days', t, timestamptz '2000-01-03 12:00+00')
    ELSE date_bin('15 minutes', t, timestamptz '2000-01-03 00:00+00')
  END
$$;

-- Adds one screen to the summaries (sign 1) or takes it out (sign -1), in the slot of the
-- writer's connection: concurrent writers of one job mostly update different rows instead of
-- queueing on one. Scores are summed as numeric, so a job's sum is exact whatever the order.
CREATE FUNCTION screen_summaries_add(s screens, sign int) RETURNS void
LANGUAGE plpgsql AS $$
DECLARE
  writer_slot smallint := pg_backend_pid() % 8;
  scored_delta int := CASE WHEN s.status = 'completed' AND s.score IS NOT NULL THEN sign ELSE 0 END;
  sum_delta numeric := CASE WHEN s.status = 'completed' AND s.score IS NOT NULL THEN sign * s.score::numeric ELSE 0 END;
BEGIN
  -- A deleted job's summaries go with it (foreign key, cascade); the deletes of its screens
  -- that the same cascade runs must not write them again.
  PERFORM 1 FROM jobs WHERE id = s.job_id;
  IF NOT FOUND THEN RETURN; END IF;
  INSERT INTO job_screen_stats AS t (job_id, slot, in_progress, completed, expired, scored, score_sum)
  VALUES (s.job_id, writer_slot,
          CASE WHEN s.status = 'in_progress' THEN sign ELSE 0 END,
          CASE WHEN s.status = 'completed' THEN sign ELSE 0 END,
          CASE WHEN s.status = 'expired' THEN sign ELSE 0 END,
          scored_delta, sum_delta)
  ON CONFLICT (job_id, slot) DO UPDATE SET
    in_progress = t.in_progress + excluded.in_progress,
    completed = t.completed + excluded.completed,
    expired = t.expired + excluded.expired,
    scored = t.scored + excluded.scored,
    score_sum = t.score_sum + excluded.score_sum;
  IF s.status = 'completed' THEN
    INSERT INTO job_completion_segments AS t (job_id, segment, slot, completed, scored, score_sum)
    VALUES (s.job_id, completion_segment(s.completed_at), writer_slot, sign, scored_delta, sum_delta)
    ON CONFLICT (job_id, segment, slot) DO UPDATE SET
      completed = t.completed + excluded.completed,
      scored = t.scored + excluded.scored,
      score_sum = t.score_sum + excluded.score_sum;
  END IF;
END
$$;

CREATE FUNCTION screens_maintain_summaries() RETURNS trigger
LANGUAGE plpgsql AS $$
BEGIN
  IF TG_OP = 'TRUNCATE' THEN
    DELETE FROM job_screen_stats;
    DELETE FROM job_completion_segments;
    RETURN NULL;
  END IF;
  IF TG_OP IN ('UPDATE', 'DELETE') THEN PERFORM screen_summaries_add(OLD, -1); END IF;
  IF TG_OP IN ('UPDATE', 'INSERT') THEN PERFORM screen_summaries_add(NEW, 1); END IF;
  RETURN NULL;
END
$$;

-- In the writer's transaction: a reader never sees a screen in the table and not in the
-- summaries, or the reverse. An update that changes nothing summarised costs nothing.
CREATE TRIGGER screens_summaries_insert_delete
  AFTER INSERT OR DELETE ON screens
  FOR EACH ROW EXECUTE FUNCTION screens_maintain_summaries();
CREATE TRIGGER screens_summaries_update
  AFTER UPDATE OF job_id, status, score, completed_at ON screens
  FOR EACH ROW
  WHEN (OLD.job_id IS DISTINCT FROM NEW.job_id OR OLD.status IS DISTINCT FROM NEW.status
        OR OLD.score IS DISTINCT FROM NEW.score OR OLD.completed_at IS DISTINCT FROM NEW.completed_at)
  EXECUTE FUNCTION screens_maintain_summaries();
CREATE TRIGGER screens_summaries_truncate
  AFTER TRUNCATE ON screens
  FOR EACH STATEMENT EXECUTE FUNCTION screens_maintain_summaries();

-- What the summaries must hold, computed from the screens: one row per job (or per job and
-- segment), for the jobs in `job_ids` or, when it is null, for all. The backfill below,
-- `npm run admin -- verify-stats [--fix]` and the benchmark's loader use these.
CREATE FUNCTION expected_job_screen_stats(job_ids uuid[] DEFAULT NULL)
RETURNS TABLE (job_id uuid, in_progress int, completed int, expired int, scored int, score_sum numeric)
LANGUAGE sql STABLE AS $$
  SELECT s.job_id,
         count(*) FILTER (WHERE s.status = 'in_progress')::int,
         count(*) FILTER (WHERE s.status = 'completed')::int,
         count(*) FILTER (WHERE s.status = 'expired')::int,
         count(s.score) FILTER (WHERE s.status = 'completed')::int,
         coalesce(sum(s.score::numeric) FILTER (WHERE s.status = 'completed'), 0)
  FROM screens s
  WHERE job_ids IS NULL OR s.job_id = ANY (job_ids)
  GROUP BY s.job_id
$$;

CREATE FUNCTION expected_job_completion_segments(job_ids uuid[] DEFAULT NULL)
RETURNS TABLE (job_id uuid, segment timestamptz, completed int, scored int, score_sum numeric)
LANGUAGE sql STABLE AS $$
  SELECT s.job_id, completion_segment(s.completed_at), count(*)::int, count(s.score)::int, coalesce(sum(s.score::numeric), 0)
  FROM screens s
  WHERE s.status = 'completed' AND (job_ids IS NULL OR s.job_id = ANY (job_ids))
  GROUP BY 1, 2
$$;

-- Replaces the summaries of the jobs in `job_ids` (all when null) with what the screens say, in
-- slot 0. The caller keeps writers of those screens out (the migration by its lock on
-- screens, verify-stats --fix by row locks) or the result can be stale.
CREATE FUNCTION rebuild_screen_summaries(job_ids uuid[] DEFAULT NULL) RETURNS void
LANGUAGE sql AS $$
  DELETE FROM job_screen_stats WHERE job_ids IS NULL OR job_id = ANY (job_ids);
  DELETE FROM job_completion_segments WHERE job_ids IS NULL OR job_id = ANY (job_ids);
  INSERT INTO job_screen_stats (job_id, slot, in_progress, completed, expired, scored, score_sum)
  SELECT job_id, 0, in_progress, completed, expired, scored, score_sum FROM expected_job_screen_stats(job_ids);
  INSERT INTO job_completion_segments (job_id, segment, slot, completed, scored, score_sum)
  SELECT job_id, segment, 0, completed, scored, score_sum FROM expected_job_completion_segments(job_ids);
$$;

-- The backfill. CREATE TRIGGER above holds a lock on screens that blocks writers until this
-- migration commits, so no write falls between the backfill and the triggers.
SELECT rebuild_screen_summaries();
