-- Webhooks (issue 41): the endpoints partners manage through the API, each told of its
-- organization's job changes as the key that made it may read them, and one row per delivery
-- attempt. The change log is read by the dispatcher like a sync reader (src/webhooks/;
-- docs/webhooks-design.md); deliveries run on pg-boss, whose schema the migrate step installs
-- beside these (src/db/queue.ts).

-- CreateEnum
CREATE TYPE "webhook_endpoint_status" AS ENUM ('enabled', 'disabled');

-- CreateTable
CREATE TABLE "webhook_endpoints" (
    "id" UUID NOT NULL DEFAULT gen_random_uuid(),
    "organization_id" UUID NOT NULL,
    "api_key_id" UUID,
    "url" TEXT NOT NULL,
    "events" TEXT[],
    "description" TEXT,
    "status" "webhook_endpoint_status" NOT NULL DEFAULT 'enabled',
    "disabled_reason" TEXT,
    "secret" BYTEA NOT NULL,
    "previous_secret" BYTEA,
    "previous_secret_until" TIMESTAMPTZ(3),
    "position" JSONB,
    "failing_since" TIMESTAMPTZ(3),
    "created_at" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,
    "updated_at" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,

    CONSTRAINT "webhook_endpoints_pkey" PRIMARY KEY ("id")
);

-- CreateTable
CREATE TABLE "webhook_deliveries" (
    "id" UUID NOT NULL DEFAULT gen_random_uuid(),
    "endpoint_id" UUID NOT NULL,
    "event_id" TEXT NOT NULL,
    "event_type" TEXT NOT NULL,
    "job_id" UUID,
    "event_at" TIMESTAMPTZ(3) NOT NULL,
    "attempt" INTEGER NOT NULL,
    "outcome" TEXT NOT NULL,
    "status_code" INTEGER,
    "error" TEXT,
    "duration_ms" INTEGER,
    "attempted_at" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,
    "next_attempt_at" TIMESTAMPTZ(3),

    CONSTRAINT "webhook_deliveries_pkey" PRIMARY KEY ("id")
);

-- CreateIndex
CREATE INDEX "webhook_endpoints_organization_id_created_at_id_idx" ON "webhook_endpoints"("organization_id", "created_at" DESC, "id" DESC);

-- CreateIndex
CREATE INDEX "webhook_endpoints_api_key_id_idx" ON "webhook_endpoints"("api_key_id");

-- CreateIndex
CREATE INDEX "webhook_deliveries_endpoint_id_attempted_at_id_idx" ON "webhook_deliveries"("endpoint_id", "attempted_at" DESC, "id" DESC);

-- AddForeignKey
ALTER TABLE "webhook_endpoints" ADD CONSTRAINT "webhook_endpoints_organization_id_fkey" FOREIGN KEY ("organization_id") REFERENCES "organizations"("id") ON DELETE CASCADE ON UPDATE CASCADE;

-- AddForeignKey
ALTER TABLE "webhook_endpoints" ADD CONSTRAINT "webhook_endpoints_api_key_id_fkey" FOREIGN KEY ("api_key_id") REFERENCES "api_keys"("id") ON DELETE SET NULL ON UPDATE CASCADE;

-- AddForeignKey
ALTER TABLE "webhook_deliveries" ADD CONSTRAINT "webhook_deliveries_endpoint_id_fkey" FOREIGN KEY ("endpoint_id") REFERENCES "webhook_endpoints"("id") ON DELETE CASCADE ON UPDATE CASCADE;

-- Below, what Prisma cannot express.
-- An endpoint's URL, events and description, bounded as the API's schemas bound them.
ALTER TABLE "webhook_endpoints" ADD CONSTRAINT "webhook_endpoints_bounded" CHECK (
  length("url") <= 2048 AND "events" IS NOT NULL AND cardinality("events") BETWEEN 1 AND 10
  AND "events" <@ ARRAY['job.updated', 'job.deleted']::TEXT[]
  AND (length("description") <= 500 OR "description" IS NULL)
  AND (("status" = 'disabled') = ("disabled_reason" IS NOT NULL))
  AND ("disabled_reason" IS NULL OR "disabled_reason" IN ('requested', 'gone', 'failing', 'key_revoked', 'operator'))
);

-- Scopes for the webhook endpoints' operations (src/auth/scopes.ts): the CHECK of
-- 20261123224522_api_key_scopes, with them. Keys made with every scope (`*`) have them.
ALTER TABLE "api_keys" DROP CONSTRAINT "api_keys_scopes_known";
ALTER TABLE "api_keys" ADD CONSTRAINT "api_keys_scopes_known"
    CHECK ("scopes" IS NOT NULL AND array_ndims("scopes") = 1 AND (
      "scopes" = ARRAY['*']::TEXT[] OR
      (cardinality("scopes") >= 1 AND "scopes" <@ ARRAY['jobs:read', 'analytics:read', 'webhooks:read', 'webhooks:write']::TEXT[])
    ));

-- The API's roles manage webhook endpoints too (prisma/sql/api-role.sql grants it, and the
-- job queue's schema, from now on): those made before, known by what only the API's role
-- may do (read the change log, and mark a key used); a read-only role gets nothing here.
DO $$
DECLARE
  r text;
BEGIN
  FOR r IN SELECT DISTINCT grantee FROM information_schema.role_table_grants
           WHERE table_schema = 'public' AND table_name = 'job_changes' AND privilege_type = 'SELECT'
             AND grantee <> current_user AND grantee <> 'PUBLIC'
             AND has_column_privilege(grantee, 'public.api_keys', 'last_used_at', 'UPDATE')
  LOOP
    EXECUTE format('GRANT SELECT, INSERT, UPDATE, DELETE ON webhook_endpoints, webhook_deliveries TO %I', r);
  END LOOP;
END
$$;
