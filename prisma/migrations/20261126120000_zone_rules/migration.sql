-- Analytics' weeks from the service's zone rules (issue 34), not from the database's tzdata.
-- Until now every local week was PostgreSQL's reading of a zone name (`AT TIME ZONE tz`), and a
-- zone that PostgreSQL's tzdata and the runtime's read differently was refused. Now the
-- service hands the database its rules as data (src/zones/: one tzdata release, pinned as a
-- package), and the database computes local time from them: an instant's offset is the one in
-- force at it, found by a binary search of the zone's transitions (width_bucket). No zone name
-- is read by PostgreSQL any more; UTC wall time is epoch arithmetic.
--
-- The summaries are unchanged: they keep completions by UTC segment and quarter hour, which do
-- not depend on any zone, so new rules apply at once to what is stored (nothing to rebuild).
-- The functions of the previous release (job_weekly_bins, job_completion_weeks, reading a
-- name) stay for its instances during a rolling upgrade; a later release may drop them.
--
-- Every function and trigger as the migrations leave them: prisma/current-functions.sql.

-- A set of rules, named by its tzdata release and a hash of its text (load_zone_rules), so
-- that two different files never share an id, and an id always means the same rules.
CREATE TABLE "zone_rule_sets" (
    "id" TEXT NOT NULL,
    "version" TEXT NOT NULL,
    "loaded_at" TIMESTAMPTZ NOT NULL DEFAULT now(),

    CONSTRAINT "zone_rule_sets_pkey" PRIMARY KEY ("id")
);

-- One zone of a set (links resolve to their zone in the service): the instants at which its
-- UTC offset changes (from 1900 on, ascending) and the offsets, in seconds east of UTC:
-- offsets[1] before transitions[1], offsets[i + 1] from transitions[i] on.
CREATE TABLE "zone_rules" (
    "rule_set" TEXT NOT NULL,
    "zone" TEXT NOT NULL,
    "transitions" TIMESTAMPTZ[] NOT NULL,
    "offsets" INTEGER[] NOT NULL,

    CONSTRAINT "zone_rules_pkey" PRIMARY KEY ("rule_set", "zone"),
    CONSTRAINT "zone_rules_rule_set_fkey" FOREIGN KEY ("rule_set") REFERENCES "zone_rule_sets"("id") ON DELETE CASCADE,
    CONSTRAINT "zone_rules_shape" CHECK (array_ndims("offsets") = 1 AND cardinality("offsets") = cardinality("transitions") + 1
                                         AND coalesce(array_ndims("transitions"), 1) = 1)
);
-- Up to about 9 kB a zone: kept out of line but uncompressed, so that reading one costs a copy,
-- not a decompression (a request reads one zone's, once: see zone_rules_of).
ALTER TABLE "zone_rules" ALTER COLUMN "transitions" SET STORAGE EXTERNAL, ALTER COLUMN "offsets" SET STORAGE EXTERNAL;

-- Loads a set from the service's JSON text ({"version", "zones": {zone: [[epoch seconds…],
-- [offsets…]]}}) unless it is there, and returns its id: the version and the first 16 hex
-- digits of the text's SHA-256, which the service computes the same way (src/zones/rules.ts).
-- The id is the database's own hash of what it stores, so a caller cannot file other rules
-- under a set's id. SECURITY DEFINER: the API's role, which writes no table, may load the
-- rules it runs with (zones/store.ts); the migrate step does it as the owner.
CREATE FUNCTION load_zone_rules(rules text) RETURNS text
LANGUAGE plpgsql SECURITY DEFINER SET search_path = public, pg_temp AS $$
DECLARE
  doc jsonb := rules::jsonb;
  set_id text;
  bad text;
BEGIN
  IF jsonb_typeof(doc -> 'version') <> 'string' OR length(doc ->> 'version') NOT BETWEEN 1 AND 32 OR jsonb_typeof(doc -> 'zones') <> 'object' THEN
    RAISE EXCEPTION 'zone rules: a version (1 to 32 characters) and an object of zones are required' USING ERRCODE = 'invalid_parameter_value';
  END IF;
  set_id := (doc ->> 'version') || '-' || left(encode(sha256(convert_to(rules, 'UTF8')), 'hex'), 16);
  INSERT INTO zone_rule_sets (id, version) VALUES (set_id, doc ->> 'version') ON CONFLICT (id) DO NOTHING;
  IF NOT FOUND THEN RETURN set_id; END IF;
  INSERT INTO zone_rules (rule_set, zone, transitions, offsets)
  SELECT set_id, z.key,
         ARRAY(SELECT to_timestamp(e.t::float8) FROM jsonb_array_elements_text(z.value -> 0) WITH ORDINALITY e(t, n) ORDER BY e.n),
         ARRAY(SELECT e.o::int FROM jsonb_array_elements_text(z.value -> 1) WITH ORDINALITY e(o, n) ORDER BY e.n)
  FROM jsonb_each(doc -> 'zones') z;
  -- width_bucket needs the transitions in order; offsets stay within a day.
  SELECT r.zone INTO bad FROM zone_rules r
  WHERE r.rule_set = set_id
    AND (EXISTS (SELECT 1 FROM unnest(r.transitions) WITH ORDINALITY u(t, i) WHERE u.t IS NULL OR u.t <= r.transitions[u.i - 1])
         OR EXISTS (SELECT 1 FROM unnest(r.offsets) o WHERE o IS NULL OR abs(o) >= 86400))
  LIMIT 1;
  IF bad IS NOT NULL THEN
    RAISE EXCEPTION 'zone rules %: the transitions of % are not ascending, or an offset is not within a day', set_id, bad USING ERRCODE = 'invalid_parameter_value';
  END IF;
  RETURN set_id;
END
$$;
REVOKE EXECUTE ON FUNCTION load_zone_rules(text) FROM PUBLIC;

-- A zone's rules for one statement: sliced (`[1:]`), so that they are copied out of their
-- table once, not fetched again by every lookup. Read in a MATERIALIZED CTE.
CREATE FUNCTION zone_rules_of(rule_set text, zone text) RETURNS TABLE(transitions timestamptz[], offsets int[])
LANGUAGE sql STABLE AS $$
  SELECT r.transitions[1:], r.offsets[1:] FROM zone_rules r WHERE r.rule_set = $1 AND r.zone = $2
$$;

-- UTC wall time of an instant, by arithmetic: no zone name read (timestamptz minus timestamptz
-- is exact microseconds, and a timestamp without zone adds days as 24 hours).
CREATE FUNCTION utc_wall_time(t timestamptz) RETURNS timestamp
LANGUAGE sql IMMUTABLE PARALLEL SAFE AS $$
  SELECT timestamp 'epoch' + (t - timestamptz 'epoch')
$$;

-- Local time of an instant in a zone given by its rules (zone_rules_of): UTC wall time plus the
-- offset in force at it (width_bucket: how many transitions are at or before it).
CREATE FUNCTION zone_local_time(t timestamptz, transitions timestamptz[], offsets int[]) RETURNS timestamp
LANGUAGE sql IMMUTABLE PARALLEL SAFE AS $$
  SELECT utc_wall_time(t) + offsets[width_bucket(t, transitions) + 1] * interval '1 second'
$$;

-- A job's completed screens by local week in a zone, from the summaries (docs/summaries-design.md,
-- "Reading a zone's weeks"): job_completion_weeks of the previous release with the zone's rules
-- in place of its name. A boundary window with no transition inside it is split at the zone's
-- Monday 00:00 in one lookup of its running totals; one with a transition is placed quarter
-- hour by quarter hour. The service sends here only zones whose rules the summaries can answer
-- exactly (src/zones/rules.ts, summarizable).
CREATE FUNCTION job_completion_weeks_in_zone(job uuid, rule_set text, zone text, first_week timestamp DEFAULT NULL, last_week timestamp DEFAULT NULL)
RETURNS TABLE(week timestamp, completed int, scored int, score_sum numeric)
LANGUAGE sql STABLE AS $$
  WITH rules AS MATERIALIZED (
    SELECT * FROM zone_rules_of(rule_set, zone)
  ), bounds AS (
    -- With a range, only what can fall into it: a local Monday 00:00 is within 14 hours of the
    -- same wall time in UTC; a day of slack on either side.
    SELECT coalesce(timestamptz 'epoch' + (first_week - timestamp 'epoch') - interval '2 days', '-infinity'::timestamptz) AS lo,
           coalesce(timestamptz 'epoch' + (last_week - timestamp 'epoch') + interval '9 days', 'infinity'::timestamptz) AS hi
  ), windows AS MATERIALIZED (
    -- Per stored row: the week that begins in the window, and where the zone splits it.
    SELECT b.window_start, b.slot, utc_wall_time(b.window_start + interval '14 hours') AS monday, k.split,
           coalesce(b.completed_through[k.i], 0) AS completed_before, coalesce(b.scored_through[k.i], 0) AS scored_before,
           coalesce(b.score_sum_through[k.i], 0) AS score_sum_before,
           b.completed_through[cardinality(b.quarters)] AS completed, b.scored_through[cardinality(b.quarters)] AS scored,
           b.score_sum_through[cardinality(b.quarters)] AS score_sum
    FROM bounds CROSS JOIN rules CROSS JOIN job_completion_boundaries b
    CROSS JOIN LATERAL (
      SELECT s.split, width_bucket(s.split - 1, b.quarters) AS i
      FROM (SELECT CASE WHEN t.first = t.last AND rules.offsets[t.first + 1] % 900 = 0 AND rules.offsets[t.first + 1] BETWEEN -43200 AND 50400
                        THEN (50400 - rules.offsets[t.first + 1]) / 900 END AS split
            -- How many transitions there are up to the window's start and up to its last
            -- instant: the same number when none falls inside it.
            FROM (SELECT width_bucket(b.window_start, rules.transitions) AS first,
                         width_bucket(b.window_start + interval '25 hours 59 minutes 59.999999 seconds', rules.transitions) AS last
                  OFFSET 0) t
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
    SELECT date_trunc('week', zone_local_time(w.window_start + q.quarter * interval '15 minutes', rules.transitions, rules.offsets)),
           q.completed, q.scored, q.score_sum
    FROM rules, windows w
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
    -- week of that Monday in every zone the service sends here (offsets from -12 to +14
    -- hours), as a window's monday above. An earlier one is a completion time as it is.
    SELECT CASE WHEN c.segment >= timestamptz '1980-01-01 00:00+00' THEN utc_wall_time(c.segment - interval '12 hours')
                ELSE date_trunc('week', zone_local_time(c.segment, rules.transitions, rules.offsets)) END,
           c.completed, c.scored, c.score_sum
    FROM bounds, rules, job_completion_segments c
    WHERE c.job_id = job AND c.segment >= bounds.lo AND c.segment < bounds.hi
    UNION ALL
    SELECT date_trunc('week', zone_local_time(d.bucket, rules.transitions, rules.offsets)), d.completed, d.scored, d.score_sum
    FROM bounds, rules, screen_summary_deltas d
    WHERE d.job_id = job AND d.bucket >= bounds.lo AND d.bucket < bounds.hi
  )
  SELECT p.week, sum(p.completed)::int, sum(p.scored)::int, sum(p.score_sum)
  FROM parts p
  WHERE first_week IS NULL OR p.week BETWEEN first_week AND last_week
  GROUP BY p.week
  HAVING sum(p.completed) > 0
$$;

-- A large job's weekly bins in a zone, as the JSON text the request's statement returns
-- (src/jobs/repository.ts): job_weekly_bins of the previous release for the summaries only.
-- plpgsql, so that the summaries' plan is initialized only when it is called (for a job
-- above ANALYTICS_SCREENS_READ_MAX), and kept from one call to the next.
CREATE FUNCTION job_weekly_bins_in_zone(job uuid, rule_set text, zone text, first_week timestamp, last_week timestamp)
RETURNS text
LANGUAGE plpgsql STABLE AS $$
BEGIN
  -- Each bin `["YYYY-MM-DD",completed,average]`: the average is the service's averageOf, as
  -- float8out writes it, or null.
  RETURN (
    SELECT '[' || string_agg('["' || to_char(w.week, 'YYYY-MM-DD') || '",' || w.completed || ','
                             || coalesce(((trim_scale(w.score_sum) / nullif(w.scored, 0))::float8)::text, 'null') || ']', ',' ORDER BY w.week) || ']'
    FROM job_completion_weeks_in_zone(job, rule_set, zone, first_week, last_week) w
    WHERE first_week IS NULL OR w.week BETWEEN first_week AND last_week);
END
$$;

-- The roles that read the summaries read the rules too (the API's role was made by
-- prisma/sql/api-role.sql after an earlier migration; the script grants them from now on).
DO $$
DECLARE
  r text;
BEGIN
  FOR r IN SELECT DISTINCT grantee FROM information_schema.role_table_grants
           WHERE table_schema = 'public' AND table_name = 'job_completion_boundaries' AND privilege_type = 'SELECT' AND grantee <> current_user
  LOOP
    EXECUTE format('GRANT SELECT ON zone_rule_sets, zone_rules TO %I', r);
    EXECUTE format('GRANT EXECUTE ON FUNCTION load_zone_rules(text) TO %I', r);
  END LOOP;
END
$$;
