-- Notices before an endpoint stops (issue 57, part 4): the organization's other endpoints are
-- sent webhook_endpoint.failing once a failing spell reaches WEBHOOK_FAILING_AFTER failed
-- attempts, and webhook_endpoint.disabled when the service or an operator disables one. The
-- columns say how far a spell went and whether its notice was sent (src/webhooks/notices.ts).
-- Constant defaults: no table rewrite.
ALTER TABLE "webhook_endpoints" ADD COLUMN     "consecutive_failures" INTEGER NOT NULL DEFAULT 0,
ADD COLUMN     "disabled_notified_at" TIMESTAMPTZ(3),
ADD COLUMN     "failing_notified_at" TIMESTAMPTZ(3);

-- Endpoints disabled before this release: no notice for what happened then.
UPDATE "webhook_endpoints" SET "disabled_notified_at" = now() WHERE "status" = 'disabled';
