-- The existing scores, checked against screens_score_representable (previous migration)
-- without blocking reads or writes (SHARE UPDATE EXCLUSIVE). A subnormal score already
-- present stops the migration, before it changes anything, with the count and the query to
-- find them: no automatic choice is ours to make (it is 0 in any arithmetic that matters, but
-- the data is the customer's), so a person decides (set it to 0, or to what was meant).
-- The validation's lock first: a lock it cannot get (an autovacuum, an ANALYZE) fails the
-- attempt (the runner's lock_timeout, then a retry) before the count's scan, not after it.
LOCK TABLE screens IN SHARE UPDATE EXCLUSIVE MODE;
DO $$
DECLARE subnormal bigint;
BEGIN
  SELECT count(*) INTO subnormal FROM screens WHERE score > 0 AND score < '2.2250738585072014e-308'::float8;
  IF subnormal > 0 THEN
    RAISE EXCEPTION '% screen(s) have a subnormal score (above 0, below 2.2250738585072014e-308), whose averages PostgreSQL cannot convert', subnormal
      USING HINT = 'Find them with: SELECT id, job_id, score FROM screens WHERE score > 0 AND score < ''2.2250738585072014e-308''::float8. Correct them (UPDATE screens SET score = 0 WHERE id = …: the summaries'' triggers keep the figures exact), mark this migration rolled back, and run the migrations again (docs/operations.md).';
  END IF;
END
$$;
ALTER TABLE screens VALIDATE CONSTRAINT screens_score_representable;
