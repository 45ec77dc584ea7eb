import { Type, type Static } from '@sinclair/typebox'
import { Count, Nullable, Timestamp, Uuid, Word } from './types.js'

export const JOB_STATUSES = ['draft', 'active', 'paused', 'closed'] as const

export const JobSchema = Type.Object({
  id: Uuid({ description: 'Identifier of the job.' }),
  user_id: Uuid({ description: 'Identifier of the owning user.' }),
  title: Type.String({ minLength: 1, maxLength: 200, examples: ['Senior Backend Engineer'] }),
  company_name: Type.String({ minLength: 1, maxLength: 200, description: 'Name of the hiring company.' }),
  description: Type.String({ maxLength: 20000, description: 'Full job description text.' }),
  status: Word({
    description: `Job state. Known values: ${JOB_STATUSES.map(s => `\`${s}\``).join(', ')}; more may be added, so treat an unknown value as opaque.`,
    examples: ['active'],
  }),
  slug: Type.String({ maxLength: 200, pattern: '^[a-z0-9]+(-[a-z0-9]+)*$', description: 'URL-friendly, unique identifier of the job.' }),
  share_token: Type.String({ maxLength: 128, pattern: '^[0-9a-f]{64,}$', description: 'Opaque token for sharing the job: at least 32 random bytes as lowercase hex.' }),
  logo_url: Nullable(Type.String({ maxLength: 2048 }), { description: 'null unless the recruiter customized branding (Pro).' }),
  brand_color: Nullable(Type.String({ maxLength: 7, pattern: '^#[0-9a-fA-F]{6}$' }), { description: '`#rrggbb`; null unless the recruiter customized branding (Pro).' }),
  show_service_branding: Type.Boolean({ description: "Whether the service's own branding is displayed." }),
  eu_candidates_allowed: Type.Boolean({ description: 'Whether candidates from the EU are allowed.' }),
  question_count: Count({ description: 'Number of questions of the job.' }),
  interview_count: Count({ description: 'Number of screens of the job, whatever their status.' }),
  average_score: Nullable(Type.Number(), { description: 'Mean score (0 to 100) of the completed screens that have a score, unrounded; null when there is none.' }),
  created_at: Timestamp({ description: 'Creation time.' }),
  updated_at: Timestamp({ description: 'Last update time.' }),
}, {
  $id: 'Job',
  title: 'Job',
  description: 'A job, with counts of its questions and screens and the average score of its completed screens.',
  additionalProperties: false,
})

export type Job = Static<typeof JobSchema>
