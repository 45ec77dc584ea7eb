-- AlterTable
ALTER TABLE "webhook_endpoints" ADD COLUMN     "sending_until" TIMESTAMPTZ(3);

-- CreateTable
CREATE TABLE "webhook_delivery_batches" (
    "id" UUID NOT NULL,
    "endpoint_id" UUID NOT NULL,
    "event_at" TIMESTAMPTZ(3) NOT NULL,
    "attempted_at" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,
    "event_ids" TEXT[],
    "event_types" TEXT[],
    "job_ids" UUID[],
    "status_codes" INTEGER[],
    "durations_ms" INTEGER[],

    CONSTRAINT "webhook_delivery_batches_pkey" PRIMARY KEY ("id")
);

-- CreateIndex
CREATE INDEX "webhook_delivery_batches_endpoint_id_attempted_at_id_idx" ON "webhook_delivery_batches"("endpoint_id", "attempted_at" DESC, "id" DESC);

-- AddForeignKey
ALTER TABLE "webhook_delivery_batches" ADD CONSTRAINT "webhook_delivery_batches_endpoint_id_fkey" FOREIGN KEY ("endpoint_id") REFERENCES "webhook_endpoints"("id") ON DELETE CASCADE ON UPDATE CASCADE;

-- The API's roles record delivered batches too (prisma/sql/api-role.sql grants it from now
-- on): those made before, known as the webhooks migration knew them, by their rights on the
-- per-attempt record.
DO $$
DECLARE
  r text;
BEGIN
  FOR r IN SELECT DISTINCT grantee FROM information_schema.role_table_grants
           WHERE table_schema = 'public' AND table_name = 'webhook_deliveries' AND privilege_type = 'INSERT'
             AND grantee <> current_user AND grantee <> 'PUBLIC'
  LOOP
    EXECUTE format('GRANT SELECT, INSERT, DELETE ON webhook_delivery_batches TO %I', r);
  END LOOP;
END
$$;
