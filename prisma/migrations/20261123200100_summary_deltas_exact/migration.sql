-- Summaries of screens, third layout (issue 21), made exact: the previous triggers summed
-- scores with 15 significant digits (`score::numeric`). Rather than a rebuild, which would
-- keep writers out, the difference between what the screens say and what is stored is
-- appended as deltas, both read in one snapshot (screen_summary_corrections, as
-- `verify-stats --fix` does), under the fold's lock: right beside live writers, and nobody
-- waits for it. It reads every screen once (about as long as verify-stats).

-- Existing completion times were counted by the previous migration; this checks them without
-- blocking reads or writes (SHARE UPDATE EXCLUSIVE).
ALTER TABLE screens VALIDATE CONSTRAINT screens_completed_at_placeable;

SELECT pg_advisory_xact_lock(8146720561340517);
INSERT INTO screen_summary_deltas (job_id, bucket, in_progress, completed, expired, scored, score_sum, changed_at)
SELECT job_id, bucket, in_progress, completed, expired, scored, score_sum, summaries_clock()
FROM screen_summary_corrections(NULL);
