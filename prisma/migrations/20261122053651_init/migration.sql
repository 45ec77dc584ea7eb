-- CreateEnum
CREATE TYPE "plan" AS ENUM ('free', 'pro');

-- CreateEnum
CREATE TYPE "subscription_status" AS ENUM ('active', 'trialing', 'past_due', 'canceled');

-- CreateEnum
CREATE TYPE "job_status" AS ENUM ('draft', 'active', 'paused', 'closed');

-- CreateEnum
CREATE TYPE "screen_status" AS ENUM ('completed', 'in_progress', 'expired');

-- CreateTable
CREATE TABLE "organizations" (
    "id" UUID NOT NULL DEFAULT gen_random_uuid(),
    "name" TEXT NOT NULL,
    "plan" "plan" NOT NULL DEFAULT 'free',
    "subscription_status" "subscription_status" NOT NULL DEFAULT 'active',
    "current_period_end" TIMESTAMPTZ(3),
    "created_at" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,

    CONSTRAINT "organizations_pkey" PRIMARY KEY ("id")
);

-- CreateTable
CREATE TABLE "users" (
    "id" UUID NOT NULL DEFAULT gen_random_uuid(),
    "organization_id" UUID NOT NULL,
    "email" TEXT NOT NULL,
    "name" TEXT NOT NULL,
    "created_at" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,

    CONSTRAINT "users_pkey" PRIMARY KEY ("id")
);

-- CreateTable
CREATE TABLE "api_keys" (
    "id" UUID NOT NULL DEFAULT gen_random_uuid(),
    "user_id" UUID NOT NULL,
    "name" TEXT NOT NULL,
    "prefix" TEXT NOT NULL,
    "hash" BYTEA NOT NULL,
    "created_at" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,
    "last_used_at" TIMESTAMPTZ(3),
    "revoked_at" TIMESTAMPTZ(3),
    "expires_at" TIMESTAMPTZ(3),

    CONSTRAINT "api_keys_pkey" PRIMARY KEY ("id")
);

-- CreateTable
CREATE TABLE "jobs" (
    "id" UUID NOT NULL DEFAULT gen_random_uuid(),
    "organization_id" UUID NOT NULL,
    "user_id" UUID NOT NULL,
    "title" TEXT NOT NULL,
    "company_name" TEXT NOT NULL,
    "description" TEXT NOT NULL,
    "status" "job_status" NOT NULL DEFAULT 'active',
    "slug" TEXT NOT NULL,
    "share_token" TEXT NOT NULL,
    "logo_url" TEXT,
    "brand_color" TEXT,
    "show_service_branding" BOOLEAN NOT NULL DEFAULT true,
    "eu_candidates_allowed" BOOLEAN NOT NULL DEFAULT true,
    "created_at" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,
    "updated_at" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,

    CONSTRAINT "jobs_pkey" PRIMARY KEY ("id")
);

-- CreateTable
CREATE TABLE "questions" (
    "id" UUID NOT NULL DEFAULT gen_random_uuid(),
    "job_id" UUID NOT NULL,
    "position" INTEGER NOT NULL,
    "text" TEXT NOT NULL,
    "created_at" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,

    CONSTRAINT "questions_pkey" PRIMARY KEY ("id")
);

-- CreateTable
CREATE TABLE "screens" (
    "id" UUID NOT NULL DEFAULT gen_random_uuid(),
    "job_id" UUID NOT NULL,
    "status" "screen_status" NOT NULL,
    "score" DOUBLE PRECISION,
    "started_at" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,
    "completed_at" TIMESTAMPTZ(3),

    CONSTRAINT "screens_pkey" PRIMARY KEY ("id")
);

-- CreateIndex
CREATE UNIQUE INDEX "users_email_key" ON "users"("email");

-- CreateIndex
CREATE INDEX "users_organization_id_idx" ON "users"("organization_id");

-- CreateIndex
CREATE UNIQUE INDEX "users_id_organization_id_key" ON "users"("id", "organization_id");

-- CreateIndex
CREATE UNIQUE INDEX "api_keys_prefix_key" ON "api_keys"("prefix");

-- CreateIndex
CREATE UNIQUE INDEX "api_keys_hash_key" ON "api_keys"("hash");

-- CreateIndex
CREATE INDEX "api_keys_user_id_idx" ON "api_keys"("user_id");

-- CreateIndex
CREATE UNIQUE INDEX "jobs_slug_key" ON "jobs"("slug");

-- CreateIndex
CREATE UNIQUE INDEX "jobs_share_token_key" ON "jobs"("share_token");

-- CreateIndex
CREATE INDEX "jobs_organization_id_created_at_id_idx" ON "jobs"("organization_id", "created_at" DESC, "id" DESC);

-- CreateIndex
CREATE INDEX "jobs_organization_id_status_created_at_id_idx" ON "jobs"("organization_id", "status", "created_at" DESC, "id" DESC);

-- CreateIndex
CREATE INDEX "jobs_user_id_organization_id_idx" ON "jobs"("user_id", "organization_id");

-- CreateIndex
CREATE UNIQUE INDEX "questions_job_id_position_key" ON "questions"("job_id", "position");

-- CreateIndex
CREATE INDEX "screens_job_id_status_completed_at_score_idx" ON "screens"("job_id", "status", "completed_at", "score");

-- AddForeignKey
ALTER TABLE "users" ADD CONSTRAINT "users_organization_id_fkey" FOREIGN KEY ("organization_id") REFERENCES "organizations"("id") ON DELETE CASCADE ON UPDATE CASCADE;

-- AddForeignKey
ALTER TABLE "api_keys" ADD CONSTRAINT "api_keys_user_id_fkey" FOREIGN KEY ("user_id") REFERENCES "users"("id") ON DELETE CASCADE ON UPDATE CASCADE;

-- AddForeignKey
ALTER TABLE "jobs" ADD CONSTRAINT "jobs_organization_id_fkey" FOREIGN KEY ("organization_id") REFERENCES "organizations"("id") ON DELETE CASCADE ON UPDATE CASCADE;

-- AddForeignKey
ALTER TABLE "jobs" ADD CONSTRAINT "jobs_user_id_organization_id_fkey" FOREIGN KEY ("user_id", "organization_id") REFERENCES "users"("id", "organization_id") ON DELETE CASCADE ON UPDATE CASCADE;

-- AddForeignKey
ALTER TABLE "questions" ADD CONSTRAINT "questions_job_id_fkey" FOREIGN KEY ("job_id") REFERENCES "jobs"("id") ON DELETE CASCADE ON UPDATE CASCADE;

-- AddForeignKey
ALTER TABLE "screens" ADD CONSTRAINT "screens_job_id_fkey" FOREIGN KEY ("job_id") REFERENCES "jobs"("id") ON DELETE CASCADE ON UPDATE CASCADE;

-- Constraints that the Prisma schema language cannot express, added by hand. The schema
-- engine diff ignores CHECK constraints, so they do not show up as drift. No apostrophes and
-- no semicolons in comments here: the node-postgres adapter splits the script on semicolons
-- without skipping comments.

-- A completed screen always has a completion time, not earlier than its start.
ALTER TABLE "screens" ADD CONSTRAINT "screens_completed_has_time"
    CHECK ("status" <> 'completed' OR "completed_at" IS NOT NULL);
ALTER TABLE "screens" ADD CONSTRAINT "screens_completed_after_start"
    CHECK ("completed_at" IS NULL OR "completed_at" >= "started_at");
-- Scores are on a 0 to 100 scale.
ALTER TABLE "screens" ADD CONSTRAINT "screens_score_range"
    CHECK ("score" IS NULL OR ("score" >= 0 AND "score" <= 100));

-- Share tokens are at least 32 random bytes as lowercase hex. Slugs are URL-safe.
ALTER TABLE "jobs" ADD CONSTRAINT "jobs_share_token_hex"
    CHECK ("share_token" ~ '^[0-9a-f]{64,}$');
ALTER TABLE "jobs" ADD CONSTRAINT "jobs_slug_url_safe"
    CHECK ("slug" ~ '^[a-z0-9]+(-[a-z0-9]+)*$' AND length("slug") <= 200);
-- Brand colors are #rrggbb.
ALTER TABLE "jobs" ADD CONSTRAINT "jobs_brand_color_hex"
    CHECK ("brand_color" IS NULL OR "brand_color" ~ '^#[0-9a-fA-F]{6}$');

-- API keys are stored as their SHA-256 digest only.
ALTER TABLE "api_keys" ADD CONSTRAINT "api_keys_hash_sha256"
    CHECK (octet_length("hash") = 32);
