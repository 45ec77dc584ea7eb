import { Type, type Static } from '@sinclair/typebox'
import { MAX_RANGE_YEARS } from '../limits.js'
import { CompareQuery, PeriodComparison } from './period-comparison.js'
import { Count } from './types.js'
import { WeekBinSchema } from './week-bin.js'

export { WeekBinSchema }

export const JobAnalyticsSchema = Type.Object({
  completion_rate: Type.Integer({ format: 'int32', minimum: 0, maximum: 100, description: 'round(100 × completed / total), halves rounded up; 0 when the job has no screens.' }),
  average_score_by_week: Type.Array(Type.Ref(WeekBinSchema), { maxItems: 10000, description: 'Completed screens binned by the Monday of the week of their completion, ascending. Weeks with none are omitted, except inside a `from`/`to` range, where every week appears.' }),
  interviews_by_status: Type.Object({
    completed: Count(),
    in_progress: Count(),
    expired: Count(),
  }, { additionalProperties: false, description: 'Screens per status; all three keys always present.' }),
  total_interviews: Count({ description: 'All screens of the job.' }),
  ...PeriodComparison,
}, {
  $id: 'JobAnalytics',
  title: 'JobAnalytics',
  description: 'Completion and score analytics of one job. `completion_rate`, `interviews_by_status` and `total_interviews` always describe the whole job.',
  additionalProperties: false,
})

// Dates of years 1900 to 2999: outside, week arithmetic leaves PostgreSQL's range (year 0).
const YEARS = '^(19|2[0-9])[0-9]{2}-'

export const AnalyticsQuery = Type.Object({
  tz: Type.Optional(Type.String({ default: 'UTC', minLength: 1, maxLength: 64, description: 'IANA time zone whose local Monday 00:00 starts the weeks, daylight saving respected; default UTC; case-insensitive. Every zone and link of IANA\'s tzdata is answered, by the rules of the release the `Tzdata-Version` response header names (the service\'s own, whatever the database\'s copy of tzdata says): Area/Location names (`Europe/Berlin`, `America/Argentina/Buenos_Aires`) and their links (`Asia/Calcutta`, `US/Pacific`), `UTC`, `Etc/GMT±N` (`Etc/GMT-2` is UTC+02:00: IANA inverts the sign), and the IANA names without an area, each answered as the zone IANA links it to (`CET` as `Europe/Brussels`, with daylight saving; `EST` as `America/Panama`, always UTC−05:00). A name is answered as the zone it names or refused, never read as an abbreviation. Refused with a 400 that says what is accepted and, where one is obvious, which zone was meant: abbreviations and ICU\'s legacy IDs, which are no IANA name (`IST`: did you mean `Asia/Kolkata`?; `PST`, `BST`, `SystemV/EST5`), offsets and POSIX strings (`+05:30`, `UTC+3`), and names IANA no longer has (`US/Pacific-New`: did you mean `America/Los_Angeles`?).', examples: ['Europe/Berlin'] })),
  from: Type.Optional(Type.String({ format: 'date', maxLength: 10, pattern: YEARS, description: `First day (\`YYYY-MM-DD\`, in \`tz\`) of a range: only weeks overlapping it are binned, and every one of them appears. Goes with \`to\`; at most ${MAX_RANGE_YEARS} years.`, examples: ['2026-09-01'] })),
  to: Type.Optional(Type.String({ format: 'date', maxLength: 10, pattern: YEARS, description: 'Last day of the range (inclusive, years 1900 to 2999). Goes with `from`.', examples: ['2026-10-31'] })),
  ...CompareQuery,
}, { additionalProperties: false })

export type JobAnalytics = Static<typeof JobAnalyticsSchema>
