-- The database side readable from one file (issue 40, part 6): every function and trigger
-- says what it is for and who calls it, and prisma/current-functions.sql prints that above
-- each definition, functions grouped by the role before the comment's first colon
-- (src/db/current-functions.ts; test/db/current-functions.test.ts fails on one without).
-- And the two functions of the release before issue 34 (weeks by PostgreSQL's own zone
-- names), which nothing has called since, dropped.

DROP FUNCTION job_weekly_bins(uuid, text, timestamp, timestamp, integer, integer);
DROP FUNCTION job_completion_weeks(uuid, text, timestamp, timestamp);

-- Summaries: screens' writers append deltas; the fold moves them into the summaries.
COMMENT ON FUNCTION screens_append_summary_deltas() IS 'Summaries: appends an INSERT''s or DELETE''s net change of screens per (job, completion bucket) to screen_summary_deltas, in the writer''s transaction, touching no summary row. Trigger of screens (statement level).';
COMMENT ON FUNCTION screens_append_update_delta() IS 'Summaries: appends an updated screen''s change (old values out, new in; nothing when no counted column changed) to screen_summary_deltas. Trigger of screens (row level).';
COMMENT ON FUNCTION screens_maintain_summaries() IS 'Summaries: empties the summaries and deltas after a TRUNCATE of screens, counting the change in each job''s version. Trigger of screens.';
COMMENT ON FUNCTION jobs_drop_summary_deltas() IS 'Summaries: deletes a deleted job''s unfolded deltas (its summaries go by foreign key). Trigger of jobs.';
COMMENT ON FUNCTION fold_screen_summary_deltas(integer) IS 'Summaries: moves up to max_deltas deltas into job_screen_stats, job_completion_segments and job_completion_boundaries, and the pending job changes into the sync log; one caller at a time (advisory lock). Called by every instance each second (src/db/summary-fold.ts) and by npm run admin -- fold-stats.';
COMMENT ON FUNCTION rebuild_screen_summaries(uuid[]) IS 'Summaries: recomputes the summaries of job_ids (all when null) from the screens, and logs the jobs whose figures changed. Run by hand after a load with the triggers off, and by the bench''s loader.';
COMMENT ON FUNCTION summaries_clock() IS 'Summaries: the clock (microseconds) a summary version never falls below. Called by the summaries'' triggers, the fold and verify-stats --fix.';
COMMENT ON FUNCTION completion_bucket(timestamp with time zone) IS 'Summaries: where a completion counts: the start of its quarter hour in a boundary window, of its segment, or (before 1980) itself. Called by the screens'' triggers and the expected_ functions.';
COMMENT ON FUNCTION completion_place(timestamp with time zone) IS 'Summaries: a bucket''s place in the summaries (a segment, or a window and its quarter hour). Called by the fold, rebuild_screen_summaries and verify-stats.';

-- Summaries' checks (verify-stats).
COMMENT ON FUNCTION expected_job_screen_stats(uuid[]) IS 'Summaries check: each job''s screens by status and scored sum, from the screens. Called by verify-stats (src/admin/screen-stats.ts), rebuild_screen_summaries and screen_summary_corrections.';
COMMENT ON FUNCTION expected_job_completion_buckets(uuid[]) IS 'Summaries check: each job''s completions per bucket, from the screens. Called by verify-stats, rebuild_screen_summaries and screen_summary_corrections.';
COMMENT ON FUNCTION stored_job_screen_stats(uuid[]) IS 'Summaries check: each job''s figures as stored (summary rows plus unfolded deltas). Called by verify-stats, job_figures and screen_summary_corrections.';
COMMENT ON FUNCTION stored_job_completion_buckets(uuid[]) IS 'Summaries check: each job''s completions per bucket as stored. Called by verify-stats, job_figures and screen_summary_corrections.';
COMMENT ON FUNCTION malformed_job_completion_boundaries(uuid[]) IS 'Summaries check: boundary rows no writer could have made (arrays out of shape, quarters out of order). Called by verify-stats and its --fix.';
COMMENT ON FUNCTION malformed_job_completion_segments(uuid[]) IS 'Summaries check: segment rows at no segment''s start. Called by verify-stats and its --fix.';
COMMENT ON FUNCTION screen_summary_corrections(uuid[]) IS 'Summaries check: the deltas that make the stored figures equal the screens. Called by verify-stats --fix, which appends them.';
COMMENT ON FUNCTION job_figures(uuid[]) IS 'Summaries check: each job''s stored figures as text (what a job shows, and everything), compared before and after by rebuild_screen_summaries to log what changed.';

-- Analytics reads.
COMMENT ON FUNCTION job_completion_weeks_in_zone(uuid, text, text, timestamp, timestamp) IS 'Analytics: a job''s completions by local week in a zone of a rule set, from the summaries and unfolded deltas. Called by job_weekly_bins_in_zone.';
COMMENT ON FUNCTION job_weekly_bins_in_zone(uuid, text, text, timestamp, timestamp) IS 'Analytics: a job''s weekly bins as JSON text, from job_completion_weeks_in_zone. Called by the analytics statement (src/jobs/analytics/read.ts).';
COMMENT ON FUNCTION zone_local_time(timestamp with time zone, timestamp with time zone[], integer[]) IS 'Analytics: an instant''s wall time by a zone''s transitions and offsets. Called by the analytics statement and job_completion_weeks_in_zone.';
COMMENT ON FUNCTION utc_wall_time(timestamp with time zone) IS 'Analytics: an instant''s wall time in UTC, without the session''s zone. Called by zone_local_time and job_completion_weeks_in_zone.';

-- Zone rules.
COMMENT ON FUNCTION zone_rules_of(text, text) IS 'Zone rules: a zone''s transitions and offsets in a rule set. Called by the analytics statement and job_completion_weeks_in_zone.';
COMMENT ON FUNCTION load_zone_rules(text) IS 'Zone rules: stores a rule set (JSON text) under its release and hash, unless there. Called at migration and by an instance whose set is missing (src/zones/store.ts).';
COMMENT ON FUNCTION keep_zone_rules(text) IS 'Zone rules: marks a set in use and deletes the sets no instance has marked for a day. Called by every instance at start and every 10 minutes (src/zones/store.ts).';

-- The sync log.
COMMENT ON FUNCTION jobs_log_changes() IS 'Sync log: logs the jobs a statement inserted, updated (old and new organization) or deleted, under the organization of each version. Trigger of jobs.';
COMMENT ON FUNCTION questions_log_changes() IS 'Sync log: leaves the jobs of the questions a statement wrote pending (log_job_changes_later). Trigger of questions.';
COMMENT ON FUNCTION truncate_log_changes() IS 'Sync log: leaves every job pending after a TRUNCATE of screens or questions. Trigger of screens and questions.';
COMMENT ON FUNCTION log_job_changes_later(uuid[], boolean) IS 'Sync log: appends (job, this transaction) to job_changes_pending, with no lock, for the fold to log under the organization the job has once it committed. Called by the questions'' and TRUNCATE triggers, the deltas'' trigger, rebuild_screen_summaries and verify-stats --fix.';
COMMENT ON FUNCTION job_changes_pending_log() IS 'Sync log: logs the pending changes the fold deletes, under each job''s organization then, with their own transaction. Trigger of job_changes_pending.';
COMMENT ON FUNCTION screen_summary_deltas_log_changes() IS 'Sync log: logs the jobs of deleted deltas (folded, or dropped with their job) with their writers'' transactions; a transaction''s own are left pending. Trigger of screen_summary_deltas.';
COMMENT ON FUNCTION prune_job_changes(integer, integer) IS 'Sync log: removes what is past the retention (tokens older answer 410) and collapses each job''s finished transactions into one row; one caller at a time. Called by every instance each minute (src/plugins/change-log-prune.ts).';
COMMENT ON FUNCTION expire_sync_tokens() IS 'Sync log: draws a new generation, so that every earlier token answers 410. Called by npm run admin -- expire-sync-tokens and change_log_lost.';
COMMENT ON FUNCTION change_log_lost() IS 'Sync log: expires every token when rows of the log, its pending part or the deltas are lost or moved by hand (a TRUNCATE, a DELETE other than the upkeep''s, an UPDATE of a row''s place) or jobs are truncated. Trigger of job_changes, job_changes_pending, screen_summary_deltas and jobs.';
COMMENT ON FUNCTION adopt_database_history() IS 'Sync log: on a copy of the database (another history), starts the log over and expires every token. Called by prune_job_changes and expire_sync_tokens.';
COMMENT ON FUNCTION database_history() IS 'Sync log: the cluster''s system identifier and the database''s oid, which every token names. Called by sync pages (src/jobs/sync/point.ts) and adopt_database_history.';

-- Guards and notifications.
COMMENT ON FUNCTION jobs_refuse_id_change() IS 'Guard: refuses a change of a job''s id (summaries and clients know a job by it). Trigger of jobs.';
COMMENT ON FUNCTION notify_caller_change() IS 'Caller cache: NOTIFY caller_changed when a key, user or organization changes, so every instance drops its cached callers. Trigger of api_keys, users and organizations.';

COMMENT ON TRIGGER api_keys_caller_change ON api_keys IS 'Writes nothing: NOTIFY caller_changed (the caller cache).';
COMMENT ON TRIGGER users_caller_change ON users IS 'Writes nothing: NOTIFY caller_changed (the caller cache).';
COMMENT ON TRIGGER organizations_caller_change ON organizations IS 'Writes nothing: NOTIFY caller_changed (the caller cache).';
COMMENT ON TRIGGER jobs_id_never_changes ON jobs IS 'Writes nothing: refuses the update.';
COMMENT ON TRIGGER jobs_drop_summary_deltas ON jobs IS 'Deletes the job''s rows of screen_summary_deltas.';
COMMENT ON TRIGGER jobs_log_changes_insert ON jobs IS 'Inserts into job_changes: the new jobs, under their organization.';
COMMENT ON TRIGGER jobs_log_changes_update ON jobs IS 'Inserts into job_changes: the updated jobs, under their old and new organization.';
COMMENT ON TRIGGER jobs_log_changes_delete ON jobs IS 'Inserts into job_changes: the deleted jobs, under their organization.';
COMMENT ON TRIGGER jobs_truncate_expire_sync_tokens ON jobs IS 'Updates job_changes_horizon: a new generation (every token 410).';
COMMENT ON TRIGGER questions_log_changes_insert ON questions IS 'Inserts into job_changes_pending: the questions'' jobs.';
COMMENT ON TRIGGER questions_log_changes_update ON questions IS 'Inserts into job_changes_pending: the questions'' old and new jobs.';
COMMENT ON TRIGGER questions_log_changes_delete ON questions IS 'Inserts into job_changes_pending: the questions'' jobs.';
COMMENT ON TRIGGER questions_log_truncate ON questions IS 'Inserts into job_changes_pending: every job.';
COMMENT ON TRIGGER screens_summary_deltas_insert ON screens IS 'Inserts into screen_summary_deltas: the statement''s net change per job and bucket.';
COMMENT ON TRIGGER screens_summary_deltas_update ON screens IS 'Inserts into screen_summary_deltas: the row''s change, when a counted column changed.';
COMMENT ON TRIGGER screens_summary_deltas_delete ON screens IS 'Inserts into screen_summary_deltas: the statement''s net change per job and bucket.';
COMMENT ON TRIGGER screens_summaries_truncate ON screens IS 'Updates job_screen_stats; deletes the segments, boundaries and deltas.';
COMMENT ON TRIGGER screens_log_truncate ON screens IS 'Inserts into job_changes_pending: every job.';
COMMENT ON TRIGGER screen_summary_deltas_log_changes ON screen_summary_deltas IS 'Inserts into job_changes the deleted deltas'' jobs (other transactions''), into job_changes_pending (its own).';
COMMENT ON TRIGGER screen_summary_deltas_truncate_expire_sync_tokens ON screen_summary_deltas IS 'Updates job_changes_horizon: a new generation (every token 410).';
COMMENT ON TRIGGER screen_summary_deltas_moved_expire_sync_tokens ON screen_summary_deltas IS 'Updates job_changes_horizon: a new generation (every token 410).';
COMMENT ON TRIGGER job_changes_pending_log ON job_changes_pending IS 'Inserts into job_changes the deleted rows'' jobs (other transactions''), into job_changes_pending (its own).';
COMMENT ON TRIGGER job_changes_pending_truncate_expire_sync_tokens ON job_changes_pending IS 'Updates job_changes_horizon: a new generation (every token 410).';
COMMENT ON TRIGGER job_changes_pending_moved_expire_sync_tokens ON job_changes_pending IS 'Updates job_changes_horizon: a new generation (every token 410).';
COMMENT ON TRIGGER job_changes_truncate_expire_sync_tokens ON job_changes IS 'Updates job_changes_horizon: a new generation (every token 410).';
COMMENT ON TRIGGER job_changes_delete_expire_sync_tokens ON job_changes IS 'Updates job_changes_horizon unless the upkeep deletes: a new generation (every token 410).';
COMMENT ON TRIGGER job_changes_moved_expire_sync_tokens ON job_changes IS 'Updates job_changes_horizon: a new generation (every token 410).';
