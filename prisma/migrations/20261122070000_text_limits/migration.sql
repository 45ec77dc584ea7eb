-- Bounds on free text, so that the API can document a maxLength for every string it
-- returns and the database guarantees it. CHECK constraints only: the Prisma schema is
-- unchanged. No apostrophes and no semicolons in comments (see the init migration).
ALTER TABLE "organizations" ADD CONSTRAINT "organizations_name_length" CHECK (length("name") BETWEEN 1 AND 200);
ALTER TABLE "users" ADD CONSTRAINT "users_name_length" CHECK (length("name") BETWEEN 1 AND 200);
ALTER TABLE "users" ADD CONSTRAINT "users_email_length" CHECK (length("email") BETWEEN 3 AND 320);
ALTER TABLE "jobs" ADD CONSTRAINT "jobs_title_length" CHECK (length("title") BETWEEN 1 AND 200);
ALTER TABLE "jobs" ADD CONSTRAINT "jobs_company_name_length" CHECK (length("company_name") BETWEEN 1 AND 200);
ALTER TABLE "jobs" ADD CONSTRAINT "jobs_description_length" CHECK (length("description") <= 20000);
ALTER TABLE "jobs" ADD CONSTRAINT "jobs_logo_url_length" CHECK ("logo_url" IS NULL OR length("logo_url") <= 2048);
ALTER TABLE "jobs" ADD CONSTRAINT "jobs_share_token_length" CHECK (length("share_token") <= 128);
