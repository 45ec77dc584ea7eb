// The dataset as set-based SQL: every row from generate_series, every "random" value a hash
// of the row's numbers (hashint8), so two runs load the same data and their figures
// compare. Identifiers that appear in answers (jobs, users, organizations) are md5-derived
// UUIDs; screens get increasing UUIDs so their primary key is filled in order (fast).
import { createHash } from 'node:crypto'

export interface DatasetSize {
  proJobs: number
  otherJobs: number
  /** Screens of job 1 (the oldest job of the Pro organization). */
  bigJobScreens: number
  /** Screens of job 2 (the second oldest). */
  smallJobScreens: number
  /** Screens of job 3: a large employer's job, for the cost that must not grow with it. */
  hugeJobScreens: number
  /** Screens in all; what the two special jobs leave is spread over the others. */
  totalScreens: number
}

export function datasetSize (quick: boolean, scale: number): DatasetSize {
  // Quick: enough jobs (420) for the list to have a 20th page of 20.
  return quick
    ? { proJobs: 420, otherJobs: 30, bigJobScreens: 5000, smallJobScreens: 200, hugeJobScreens: 20_000, totalScreens: Math.round(30_000 * scale) + 20_000 }
    : { proJobs: 2000, otherJobs: 300, bigJobScreens: 100_000, smallJobScreens: 200, hugeJobScreens: 1_000_000, totalScreens: Math.round(1_000_000 * scale) + 1_000_000 }
}

const md5Uuid = (text: string): string => createHash('md5').update(text).digest('hex').replace(/^(.{8})(.{4})(.{4})(.{4})(.{12})$/, '$1-$2-$3-$4-$5')

export const PRO_ORG_ID = md5Uuid('bench-org-pro')
export const OTHER_ORG_ID = md5Uuid('bench-org-other')
export const PRO_USER_ID = md5Uuid('bench-user-pro-0')
export const jobId = (k: number): string => md5Uuid(`bench-job-${k}`)
export const BIG_JOB_ID = jobId(1)
export const SMALL_JOB_ID = jobId(2)
export const HUGE_JOB_ID = jobId(3)

// Two years of history; jobs are created in the first 700 days, screens up to the end.
const START = "timestamptz '2024-11-01T00:00:00Z'"
const END = "timestamptz '2026-11-01T00:00:00Z'"
const JOB_SPAN_MS = 700 * 86_400_000

/** A uniform number in [0, 1) derived from an integer expression. */
const u = (x: string): string => `((hashint8(${x})::bigint + 2147483648)::float8 / 4294967296)`

export function datasetStatements (size: DatasetSize): Array<{ label: string, sql: string }> {
  const jobs = size.proJobs + size.otherJobs
  const rest = Math.max(0, size.totalScreens - size.bigJobScreens - size.smallJobScreens - size.hugeJobScreens)
  const mean = rest / (jobs - 3)
  const org = (k: string): string => `CASE WHEN ${k} <= ${size.proJobs} THEN 'pro' ELSE 'other' END`
  return [{
    label: 'organizations, users',
    sql: `
      INSERT INTO organizations (id, name, plan, subscription_status, current_period_end, created_at) VALUES
        ('${PRO_ORG_ID}', 'Bench Pro Org', 'pro', 'active', NULL, ${START} - interval '60 days'),
        ('${OTHER_ORG_ID}', 'Bench Other Org', 'free', 'active', NULL, ${START} - interval '60 days');
      INSERT INTO users (id, organization_id, email, name, created_at)
      SELECT md5('bench-user-' || o.tag || '-' || i)::uuid, o.id, 'bench-' || o.tag || '-' || i || '@bench.example', 'Bench User ' || i, ${START} - interval '30 days'
      FROM (VALUES ('pro', '${PRO_ORG_ID}'::uuid), ('other', '${OTHER_ORG_ID}'::uuid)) o(tag, id), generate_series(0, 4) i`,
  }, {
    // Each organization's jobs are spread over 700 days (the other's an hour apart from the
    // Pro one's), plus up to a second from a hash: distinct times, so list order is meaningful.
    label: 'jobs',
    sql: `
      INSERT INTO jobs (id, organization_id, user_id, title, company_name, description, status, slug, share_token,
                        logo_url, brand_color, show_service_branding, eu_candidates_allowed, created_at, updated_at)
      SELECT md5('bench-job-' || k)::uuid, o.id, md5('bench-user-' || o.tag || '-' || (k % 5))::uuid,
             t.title || ' #' || k,
             (ARRAY['Acme Corp', 'Globex GmbH', 'Initech Ltd', 'Umbrella Zürich AG'])[1 + k % 4],
             'We are hiring a "' || t.title || E'".\\nLocation: Zürich — hybrid, 2 days a week on site.\\n' || repeat('Build and run the services that screen candidates fairly; measure, then improve. ', 3 + k % 17),
             (CASE WHEN ${u('k * 16 + 4')} < 0.7 THEN 'active' WHEN ${u('k * 16 + 4')} < 0.8 THEN 'draft' WHEN ${u('k * 16 + 4')} < 0.9 THEN 'paused' ELSE 'closed' END)::job_status,
             'bench-job-' || k, md5('bench-share-a-' || k) || md5('bench-share-b-' || k),
             CASE WHEN k % 10 < 3 THEN 'https://cdn.bench.example/logos/' || k || '.png' END,
             CASE WHEN k % 10 < 3 THEN '#' || substr(md5('bench-color-' || k), 1, 6) END,
             k % 3 <> 0, k % 4 <> 0,
             c.created, c.created + floor(${u('k * 16 + 1')} * 30 * 86400000) * interval '1 millisecond'
      FROM generate_series(1, ${jobs}) k
      CROSS JOIN LATERAL (SELECT ${org('k')} AS tag, CASE WHEN k <= ${size.proJobs} THEN '${PRO_ORG_ID}'::uuid ELSE '${OTHER_ORG_ID}'::uuid END AS id,
                                 CASE WHEN k <= ${size.proJobs} THEN k - 1 ELSE k - ${size.proJobs} - 1 END AS idx,
                                 CASE WHEN k <= ${size.proJobs} THEN ${size.proJobs} ELSE ${size.otherJobs} END AS n) o
      CROSS JOIN LATERAL (SELECT (ARRAY['Senior Backend Engineer', 'Product Designer', 'Data Analyst', 'Site Reliability Engineer',
                                        'Engineering Manager', 'QA Engineer', 'Frontend Developer', 'Recruiter'])[1 + k % 8] AS title) t
      CROSS JOIN LATERAL (SELECT ${START} + (floor(o.idx::float8 * ${JOB_SPAN_MS} / o.n) + CASE o.tag WHEN 'pro' THEN 0 ELSE 3600000 END
                                 + floor(${u('k * 16')} * 1000)) * interval '1 millisecond' AS created) c`,
  }, {
    label: 'questions (3 to 10 per job)',
    sql: `
      INSERT INTO questions (id, job_id, position, text, created_at)
      SELECT md5('bench-question-' || k || '-' || p)::uuid, md5('bench-job-' || k)::uuid, p,
             'Question ' || p || ': tell us about a time you had to decide with incomplete information.', ${START}
      FROM generate_series(1, ${jobs}) k, LATERAL generate_series(1, 3 + (hashint8(k * 16 + 2) & 7)) p`,
  }, {
    // Screens of a job lie between its creation and the end of the window: about 60%
    // completed (90% of them scored, 0 to 100 with one decimal), 25% in progress, 15% expired.
    label: 'screens',
    sql: `
      WITH counts AS (
        SELECT k, j.created_at AS created,
               CASE k WHEN 1 THEN ${size.bigJobScreens} WHEN 2 THEN ${size.smallJobScreens} WHEN 3 THEN ${size.hugeJobScreens}
                      ELSE floor(${mean} * (0.25 + 1.5 * ${u('k * 16 + 3')}))::int END AS n
        FROM generate_series(1, ${jobs}) k JOIN jobs j ON j.id = md5('bench-job-' || k)::uuid
      )
      INSERT INTO screens (id, job_id, status, score, started_at, completed_at)
      SELECT (lpad(to_hex(c.k), 8, '0') || '-0000-4000-8000-' || lpad(to_hex(g), 12, '0'))::uuid, md5('bench-job-' || c.k)::uuid,
             s.status,
             CASE WHEN s.status = 'completed' AND ${u('h.x + 3')} < 0.9 THEN round((${u('h.x + 4')} * 100)::numeric, 1)::float8 END,
             s.started,
             CASE WHEN s.status = 'completed' THEN s.started + (5 + ${u('h.x + 5')} * 55) * interval '1 minute' END
      FROM counts c, generate_series(1, c.n) g
      CROSS JOIN LATERAL (SELECT (c.k::bigint * 10000000 + g) * 16 AS x) h
      CROSS JOIN LATERAL (SELECT (CASE WHEN ${u('h.x')} < 0.60 THEN 'completed' WHEN ${u('h.x')} < 0.85 THEN 'in_progress' ELSE 'expired' END)::screen_status AS status,
                                 c.created + ${u('h.x + 1')} * (${END} - c.created) AS started) s`,
  }]
}
