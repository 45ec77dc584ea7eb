-- Summaries of screens, second layout (issue 13), its tables: a boundary window's
-- completions as running totals in one row, so that a job's analytics cost O(weeks) rows
-- whatever its size; a version per slot for the analytics ETag. Quick (a column with a
-- constant default, an empty table): the upkeep and the rebuild are the next migration, which
-- keeps writers of screens waiting but not readers.

-- AlterTable
ALTER TABLE "job_screen_stats" ADD COLUMN     "version" BIGINT NOT NULL DEFAULT 0;

-- CreateTable
CREATE TABLE "job_completion_boundaries" (
    "job_id" UUID NOT NULL,
    "window_start" TIMESTAMPTZ NOT NULL,
    "slot" SMALLINT NOT NULL,
    "quarters" INTEGER[],
    "completed_through" INTEGER[],
    "scored_through" INTEGER[],
    "score_sum_through" DECIMAL[],

    CONSTRAINT "job_completion_boundaries_pkey" PRIMARY KEY ("job_id","window_start","slot")
);

-- AddForeignKey
ALTER TABLE "job_completion_boundaries" ADD CONSTRAINT "job_completion_boundaries_job_id_fkey" FOREIGN KEY ("job_id") REFERENCES "jobs"("id") ON DELETE CASCADE ON UPDATE CASCADE;

-- Below, what Prisma cannot express. The design, the alternatives weighed and what was
-- measured: docs/summaries-design.md.

-- Running totals stay inline and uncompressed (a dense row is about 2.6 kB): a compressed
-- array is decompressed on every read of one of its elements.
ALTER TABLE "job_completion_boundaries" SET (toast_tuple_target = 8160);
ALTER TABLE "job_completion_boundaries" ADD CONSTRAINT "job_completion_boundaries_shape" CHECK (
  quarters IS NOT NULL AND completed_through IS NOT NULL AND scored_through IS NOT NULL AND score_sum_through IS NOT NULL
  AND cardinality(quarters) > 0 AND cardinality(completed_through) = cardinality(quarters)
  AND cardinality(scored_through) = cardinality(quarters) AND cardinality(score_sum_through) = cardinality(quarters));

-- The roles that read the summaries (the API's, prisma/sql/api-role.sql, run after an earlier
-- migration) read the new table too: without it, analytics would fail where it is deployed.
DO $$
DECLARE reader record;
BEGIN
  FOR reader IN SELECT DISTINCT grantee FROM information_schema.role_table_grants
                WHERE table_name = 'job_completion_segments' AND privilege_type = 'SELECT' AND grantee <> current_user LOOP
    EXECUTE 'GRANT SELECT ON job_completion_boundaries TO '
      || CASE WHEN reader.grantee = 'PUBLIC' THEN 'PUBLIC' ELSE quote_ident(reader.grantee) END;
  END LOOP;
END
$$;
