-- An analytics request's weekly bins, as one JSON array of [week, completed, average], from
-- the branch the job's size calls for: from its screens (a small job: at most
-- `screens_read_max` completed screens, an index range scan as the on-read computation does)
-- or from its summaries (job_completion_weeks: about two rows a week, whatever the number
-- of screens).
--
-- A function rather than both branches in the request's statement (each gated by a
-- one-time filter): PostgreSQL initializes every node of a statement's plan on every
-- execution, run or not, and the summaries' branch is most of that plan. Measured with
-- callgrind on a 200-screen job: 3.47M instructions a request with both branches in the
-- statement, 2.75M with this function (the on-read baseline's statement: 2.49M); a
-- 5,000-screen job 8.21M and 8.18M. STABLE, so that its queries read the calling
-- statement's snapshot: the bins agree with the counts and version read beside them.
--
-- The average is the service's averageOf (src/jobs/repository.ts): an exact numeric sum,
-- trimmed, divided, as float8. Scores are summed as `score::text::numeric`, exact to the
-- stored doubles (extra_float_digits above 0: the default, and the API role's 3).
CREATE FUNCTION job_weekly_bins(job uuid, tz text, first_week timestamp, last_week timestamp, completed int, screens_read_max int)
RETURNS json
LANGUAGE plpgsql STABLE AS $$
BEGIN
  IF completed > screens_read_max THEN
    RETURN (
      SELECT json_agg(json_build_array(to_char(w.week, 'YYYY-MM-DD'), w.completed, (trim_scale(w.score_sum) / nullif(w.scored, 0))::float8) ORDER BY w.week)
      FROM job_completion_weeks(job, tz, first_week, last_week) w
      WHERE first_week IS NULL OR w.week BETWEEN first_week AND last_week);
  END IF;
  RETURN (
    SELECT json_agg(json_build_array(to_char(w.week, 'YYYY-MM-DD'), w.completed, (trim_scale(w.score_sum) / nullif(w.scored, 0))::float8) ORDER BY w.week)
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
