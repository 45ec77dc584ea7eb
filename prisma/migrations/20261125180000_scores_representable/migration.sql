-- Scores are 0 or normal doubles: no subnormal (0 < score < 2.2250738585072014e-308). The mean
-- of a subnormal score with zeros can lie below half the smallest double, where PostgreSQL's
-- numeric-to-double conversion fails ("out of range for type double precision") instead of
-- giving 0: the job, its list page and its analytics answered 500 for good. With normal
-- scores no mean of up to 2^31 scores comes near that (the smallest nonzero sum, 2.2e-308,
-- over 2^31 is still 1e-317, a subnormal the conversion returns). Found by the summaries'
-- property test with a random seed (a score of 5e-324 beside two zeros).
--
-- NOT VALID: checked for new rows at once, under the brief exclusive lock that adding a
-- constraint takes (the migration runner's lock_timeout and retries keep a long reader from
-- queueing the API behind it); the next migration checks the existing rows without blocking
-- reads or writes.
ALTER TABLE screens ADD CONSTRAINT screens_score_representable
  CHECK (score IS NULL OR score = 0 OR score >= '2.2250738585072014e-308'::float8) NOT VALID;
