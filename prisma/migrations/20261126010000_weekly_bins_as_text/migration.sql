-- A large job's analytics (issue 21, "the large-job figures kept"): its weekly bins cost
-- 6.38M backend instructions a call on a job of 104 weeks (callgrind, a single-user backend,
-- EXECUTE of `SELECT job_weekly_bins(…)` repeated), 5.36M after this migration:
--   * the bins built as JSON text, as the small job's are in the request's statement
--     (src/jobs/repository.ts, SMALL_JOB_BINS), not with json_agg(json_build_array(…)), which
--     looks up each value's type and output function for every bin (0.25M); and returned as
--     text, where a json result would be parsed once more (json_in: 0.14M);
--   * a zone's offsets with date_part (a double), not extract (numeric arithmetic): 0.4M;
--   * a segment's week without the zone (0.4M): since 1980 a segment lies inside one week in
--     every zone.
-- The values are unchanged (the JSON differs in its spaces only). The request's statement
-- casts the result `::text`, which an instance of the previous release does too: it reads
-- the same text from this function.
--
-- Every function and trigger as the migrations leave them: prisma/current-functions.sql.

CREATE OR REPLACE FUNCTION job_completion_weeks(job uuid, tz text, first_week timestamp without time zone DEFAULT NULL::timestamp without time zone, last_week timestamp without time zone DEFAULT NULL::timestamp without time zone)
 RETURNS TABLE(week timestamp without time zone, completed integer, scored integer, score_sum numeric)
 LANGUAGE sql
 STABLE
AS $function$
  -- With a range, only what can fall into it: a day of slack around the range's instants.
  WITH bounds AS (
    SELECT coalesce((first_week AT TIME ZONE tz) - interval '2 days', '-infinity'::timestamptz) AS lo,
           coalesce(((last_week + interval '8 days') AT TIME ZONE tz) + interval '1 day', 'infinity'::timestamptz) AS hi
  ), windows AS MATERIALIZED (
    -- Per stored row: the week that begins in the window, and where the zone splits it.
    SELECT b.window_start, b.slot, (b.window_start + interval '14 hours') AT TIME ZONE 'UTC' AS monday, k.split,
           coalesce(b.completed_through[k.i], 0) AS completed_before, coalesce(b.scored_through[k.i], 0) AS scored_before,
           coalesce(b.score_sum_through[k.i], 0) AS score_sum_before,
           b.completed_through[cardinality(b.quarters)] AS completed, b.scored_through[cardinality(b.quarters)] AS scored,
           b.score_sum_through[cardinality(b.quarters)] AS score_sum
    FROM bounds, job_completion_boundaries b
    CROSS JOIN LATERAL (
      SELECT s.split, width_bucket(s.split - 1, b.quarters) AS i
      FROM (SELECT CASE WHEN o.first = o.last AND o.first % 900 = 0 AND o.first BETWEEN -43200 AND 50400
                        THEN (50400 - o.first) / 900 END AS split
            -- The zone's UTC offsets, in seconds (a difference of epochs, cast after: an epoch
            -- after 2038 does not fit an int). date_part's double holds whole seconds exactly,
            -- without extract's numeric arithmetic.
            FROM (SELECT (date_part('epoch', b.window_start AT TIME ZONE tz) - date_part('epoch', b.window_start))::int AS first,
                         (date_part('epoch', (b.window_start + interval '25 hours 45 minutes') AT TIME ZONE tz)
                           - date_part('epoch', b.window_start + interval '25 hours 45 minutes'))::int AS last
                  OFFSET 0) o
            OFFSET 0) s
      OFFSET 0) k
    WHERE b.job_id = job AND b.window_start >= bounds.lo AND b.window_start < bounds.hi
  ), parts AS (
    SELECT monday - interval '7 days' AS week, completed_before AS completed, scored_before AS scored, score_sum_before AS score_sum
    FROM windows WHERE split IS NOT NULL
    UNION ALL
    SELECT monday, completed - completed_before, scored - scored_before, score_sum - score_sum_before
    FROM windows WHERE split IS NOT NULL
    UNION ALL
    SELECT date_trunc('week', (w.window_start + q.quarter * interval '15 minutes') AT TIME ZONE tz), q.completed, q.scored, q.score_sum
    FROM windows w
    JOIN job_completion_boundaries b ON b.job_id = job AND b.window_start = w.window_start AND b.slot = w.slot
    CROSS JOIN LATERAL (
      SELECT u.quarter, u.completed - lag(u.completed, 1, 0) OVER r AS completed, u.scored - lag(u.scored, 1, 0) OVER r AS scored,
             u.score_sum - lag(u.score_sum, 1, 0::numeric) OVER r AS score_sum
      FROM unnest(b.quarters, b.completed_through, b.scored_through, b.score_sum_through) WITH ORDINALITY u(quarter, completed, scored, score_sum, i)
      WINDOW r AS (ORDER BY u.i)
    ) q
    WHERE w.split IS NULL
    UNION ALL
    -- A segment since 1980 runs from a Monday 12:00 UTC to the Sunday 10:00 after: inside the
    -- week of that Monday in every zone (offsets from -12 to +14 hours), as a window's monday
    -- above; no zone to read. An earlier one is a completion time as it is.
    SELECT CASE WHEN c.segment >= timestamptz '1980-01-01 00:00+00' THEN (c.segment - interval '12 hours') AT TIME ZONE 'UTC'
                ELSE date_trunc('week', c.segment AT TIME ZONE tz) END,
           c.completed, c.scored, c.score_sum
    FROM bounds, job_completion_segments c
    WHERE c.job_id = job AND c.segment >= bounds.lo AND c.segment < bounds.hi
    UNION ALL
    SELECT date_trunc('week', d.bucket AT TIME ZONE tz), d.completed, d.scored, d.score_sum
    FROM bounds, screen_summary_deltas d
    WHERE d.job_id = job AND d.bucket >= bounds.lo AND d.bucket < bounds.hi
  )
  SELECT p.week, sum(p.completed)::int, sum(p.scored)::int, sum(p.score_sum)
  FROM parts p
  WHERE first_week IS NULL OR p.week BETWEEN first_week AND last_week
  GROUP BY p.week
  HAVING sum(p.completed) > 0
$function$;

-- Returns text now: a function's result type changes only by dropping it, in this migration's
-- transaction (a caller sees the old function or the new one).
DROP FUNCTION job_weekly_bins(uuid, text, timestamp, timestamp, int, int);

CREATE FUNCTION job_weekly_bins(job uuid, tz text, first_week timestamp, last_week timestamp, completed int, screens_read_max int)
RETURNS text
LANGUAGE plpgsql STABLE AS $$
BEGIN
  -- Each bin `["YYYY-MM-DD",completed,average]`: the average is the service's averageOf, as
  -- float8out writes it (json_build_array wrote it the same), or null.
  IF completed > screens_read_max THEN
    RETURN (
      SELECT '[' || string_agg('["' || to_char(w.week, 'YYYY-MM-DD') || '",' || w.completed || ','
                               || coalesce(((trim_scale(w.score_sum) / nullif(w.scored, 0))::float8)::text, 'null') || ']', ',' ORDER BY w.week) || ']'
      FROM job_completion_weeks(job, tz, first_week, last_week) w
      WHERE first_week IS NULL OR w.week BETWEEN first_week AND last_week);
  END IF;
  RETURN (
    SELECT '[' || string_agg('["' || to_char(w.week, 'YYYY-MM-DD') || '",' || w.completed || ','
                             || coalesce(((trim_scale(w.score_sum) / nullif(w.scored, 0))::float8)::text, 'null') || ']', ',' ORDER BY w.week) || ']'
    FROM (
      SELECT date_trunc('week', s.completed_at AT TIME ZONE tz) AS week, count(*)::int AS completed,
             count(s.score)::int AS scored, coalesce(sum(s.score::text::numeric), 0) AS score_sum
      FROM screens s
      WHERE s.job_id = job AND s.status = 'completed'
      GROUP BY 1
    ) w
    WHERE first_week IS NULL OR w.week BETWEEN first_week AND last_week);
END
$$;
