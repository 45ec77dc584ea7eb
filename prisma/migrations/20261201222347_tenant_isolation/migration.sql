-- AlterTable
ALTER TABLE "webhook_endpoints" ADD COLUMN     "dispatch_error" TEXT,
ADD COLUMN     "dispatch_failures" INTEGER NOT NULL DEFAULT 0,
ADD COLUMN     "dispatch_paused_until" TIMESTAMPTZ(3);

-- CreateTable
CREATE TABLE "idempotency_keys" (
    "api_key_id" UUID NOT NULL,
    "key" TEXT NOT NULL,
    "fingerprint" BYTEA NOT NULL,
    "status_code" INTEGER,
    "response" BYTEA,
    "created_at" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,

    CONSTRAINT "idempotency_keys_pkey" PRIMARY KEY ("api_key_id","key")
);

-- CreateIndex
CREATE INDEX "idempotency_keys_created_at_idx" ON "idempotency_keys"("created_at");

-- AddForeignKey
ALTER TABLE "idempotency_keys" ADD CONSTRAINT "idempotency_keys_api_key_id_fkey" FOREIGN KEY ("api_key_id") REFERENCES "api_keys"("id") ON DELETE CASCADE ON UPDATE CASCADE;

-- Below, what Prisma cannot express.
-- A new reason an endpoint is disabled: key_moved, its maker key's user now in another
-- organization (issue 55). The CHECK of 20261127180000_webhooks, with it.
ALTER TABLE "webhook_endpoints" DROP CONSTRAINT "webhook_endpoints_bounded";
ALTER TABLE "webhook_endpoints" ADD CONSTRAINT "webhook_endpoints_bounded" CHECK (
  length("url") <= 2048 AND "events" IS NOT NULL AND cardinality("events") BETWEEN 1 AND 10
  AND "events" <@ ARRAY['job.updated', 'job.deleted']::TEXT[]
  AND (length("description") <= 500 OR "description" IS NULL)
  AND (("status" = 'disabled') = ("disabled_reason" IS NOT NULL))
  AND ("disabled_reason" IS NULL OR "disabled_reason" IN ('requested', 'gone', 'failing', 'key_revoked', 'key_moved', 'operator'))
  AND "dispatch_failures" >= 0 AND (length("dispatch_error") <= 1000 OR "dispatch_error" IS NULL)
);

-- An Idempotency-Key is what the API accepts (1 to 255 printable ASCII characters).
ALTER TABLE "idempotency_keys" ADD CONSTRAINT "idempotency_keys_bounded" CHECK (
  length("key") BETWEEN 1 AND 255 AND length("fingerprint") = 32
);

-- The API's roles keep idempotency keys (prisma/sql/api-role.sql grants it from now on):
-- those made before, known by their rights on the webhook endpoints.
DO $$
DECLARE
  r text;
BEGIN
  FOR r IN SELECT DISTINCT grantee FROM information_schema.role_table_grants
           WHERE table_schema = 'public' AND table_name = 'webhook_endpoints' AND privilege_type = 'INSERT'
             AND grantee <> current_user AND grantee <> 'PUBLIC'
  LOOP
    EXECUTE format('GRANT SELECT, INSERT, UPDATE, DELETE ON idempotency_keys TO %I', r);
  END LOOP;
END
$$;
