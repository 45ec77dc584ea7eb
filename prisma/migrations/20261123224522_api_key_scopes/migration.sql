-- Scoped API keys (issue 24). `scopes` names what a key may do: a list of scope names, or
-- the one element `*`, every scope there is and any added later. Existing keys get `*` (they
-- could do everything their user can, and keep that). Adding a column with a constant default
-- rewrites nothing (PostgreSQL 11 and later): an instant under the table lock.

-- AlterTable
ALTER TABLE "api_keys" ADD COLUMN     "scopes" TEXT[] DEFAULT ARRAY['*']::TEXT[];

-- Below, what Prisma cannot express. Prisma makes list columns nullable and reads NULL as an
-- empty list, which would blur "no scope" and "every scope": the CHECK refuses NULL, an empty
-- list and any name but those of src/auth/scopes.ts (a new scope replaces this constraint in
-- its own migration).
ALTER TABLE "api_keys" ADD CONSTRAINT "api_keys_scopes_known"
    CHECK ("scopes" IS NOT NULL AND array_ndims("scopes") = 1 AND (
      "scopes" = ARRAY['*']::TEXT[] OR
      (cardinality("scopes") >= 1 AND "scopes" <@ ARRAY['jobs:read', 'analytics:read']::TEXT[])
    ));

-- A change of scopes changes what a cached caller may do: it notifies like a revocation
-- (migration caller_change_notifications), so that every instance drops its cached callers
-- at the commit. The trigger is replaced in the same transaction: no change goes unheard.
DROP TRIGGER "api_keys_caller_change" ON "api_keys";
CREATE TRIGGER "api_keys_caller_change"
  AFTER UPDATE OF revoked_at, expires_at, hash, user_id, scopes OR DELETE OR TRUNCATE ON api_keys
  FOR EACH STATEMENT EXECUTE FUNCTION notify_caller_change();
