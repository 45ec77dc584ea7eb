-- The single-row writers' dataset: 100 jobs of one organization and 100,000 completed screens
-- over the last 300 days, folded. Read by bench/fold-cost.sh and bench/trigger-cost.sh.
INSERT INTO organizations (id, name, plan, subscription_status, created_at) VALUES ('00000000-0000-4000-8000-000000000001', 'fold bench', 'pro', 'active', now());
INSERT INTO users (id, organization_id, email, name, created_at) VALUES ('00000000-0000-4000-8000-000000000002', '00000000-0000-4000-8000-000000000001', 'fold@bench.example', 'bench', now());
INSERT INTO jobs (id, organization_id, user_id, title, company_name, description, slug, share_token)
SELECT ('00000000-0000-4000-9000-' || lpad(k::text, 12, '0'))::uuid, '00000000-0000-4000-8000-000000000001', '00000000-0000-4000-8000-000000000002',
       'job ' || k, 'bench', 'bench', 'fold-bench-' || k, md5(k::text) || md5('share' || k)
FROM generate_series(1, 100) k;
-- Completed screens over the last 300 days, scored with a decimal like the main bench's.
INSERT INTO screens (id, job_id, status, score, started_at, completed_at)
SELECT ('00000000-0000-4000-a000-' || lpad(g::text, 12, '0'))::uuid, ('00000000-0000-4000-9000-' || lpad((1 + g % 100)::text, 12, '0'))::uuid,
       'completed', round((random() * 1000)::numeric) / 10, c - interval '1 hour', c
FROM generate_series(1, 100000) g, LATERAL (SELECT now() - interval '1 day' - random() * interval '300 days' + g * interval '0 s' AS c) t;
SELECT fold_screen_summary_deltas(100000);
