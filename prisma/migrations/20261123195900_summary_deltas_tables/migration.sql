-- Summaries of screens, third layout (issue 21), its tables: a column and the deltas table,
-- in a migration of their own. Adding a column takes a lock that blocks readers of
-- job_screen_stats, for an instant only; the next migration swaps the triggers and the one
-- after makes the summaries exact to the stored doubles, beside live writers.

-- AlterTable
ALTER TABLE "job_screen_stats" ADD COLUMN     "changes" BIGINT NOT NULL DEFAULT 0,
ADD COLUMN     "changes_hash" BIGINT NOT NULL DEFAULT 0;

-- CreateTable
CREATE TABLE "screen_summary_deltas" (
    "id" BIGSERIAL NOT NULL,
    "job_id" UUID NOT NULL,
    "bucket" TIMESTAMPTZ,
    "in_progress" INTEGER NOT NULL,
    "completed" INTEGER NOT NULL,
    "expired" INTEGER NOT NULL,
    "scored" INTEGER NOT NULL,
    "score_sum" DECIMAL NOT NULL,
    "changed_at" BIGINT NOT NULL,

    CONSTRAINT "screen_summary_deltas_pkey" PRIMARY KEY ("job_id","id")
);

-- Below, what Prisma cannot express.

-- The roles that read the summaries (the API's, prisma/sql/api-role.sql) read the deltas too.
DO $$
DECLARE reader record;
BEGIN
  FOR reader IN SELECT DISTINCT grantee FROM information_schema.role_table_grants
                WHERE table_name = 'job_completion_segments' AND privilege_type = 'SELECT' AND grantee <> current_user LOOP
    EXECUTE 'GRANT SELECT ON screen_summary_deltas TO '
      || CASE WHEN reader.grantee = 'PUBLIC' THEN 'PUBLIC' ELSE quote_ident(reader.grantee) END;
  END LOOP;
END
$$;
