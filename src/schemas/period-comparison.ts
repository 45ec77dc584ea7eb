import { Type } from '@sinclair/typebox'
import { Count, Nullable, StringEnum } from './types.js'
import { WeekBinSchema } from './week-bin.js'

// compare=previous_period (issue 56, part 3): the range's own totals, the same figures for the
// range of as many weeks just before it, and the differences. docs/decisions.md, "Dashboards:
// the previous period".

export const CompareQuery = {
  compare: Type.Optional(StringEnum(['previous_period'] as const, { description: 'With `from` and `to`: add `period` (the range\'s completions and their mean score), `previous` (the same for the range as many weeks earlier, with its weekly bins) and `change` (the differences).' })),
}

const Day = (description: string) => Type.String({ format: 'date', maxLength: 10, description })
const PERIOD_FIGURES = {
  from: Day('First day of the period (`YYYY-MM-DD`, in `tz`).'),
  to: Day('Last day of the period, inclusive.'),
  completed: Count({ description: 'Screens completed in the period\'s weeks (the weeks overlapping it, as `average_score_by_week` bins them).' }),
  average_score: Nullable(Type.Number(), { description: 'Mean score of the period\'s scored completions, each screen weighing one; null when none has a score.' }),
}

export const AnalyticsPeriodSchema = Type.Object(PERIOD_FIGURES, {
  $id: 'AnalyticsPeriod',
  title: 'AnalyticsPeriod',
  description: 'The requested range\'s own totals: the sums of its weekly bins.',
  additionalProperties: false,
})

export const AnalyticsPreviousPeriodSchema = Type.Object({
  ...PERIOD_FIGURES,
  average_score_by_week: Type.Array(Type.Ref(WeekBinSchema), { maxItems: 10000, description: 'The previous period\'s weeks, every one of them, in order: week i here is week i of `average_score_by_week`, as many weeks earlier.' }),
}, {
  $id: 'AnalyticsPreviousPeriod',
  title: 'AnalyticsPreviousPeriod',
  description: 'The range as many whole weeks earlier as it spans (so that weeks align: `from` and `to` moved back by 7 × the number of weeks), with the same figures.',
  additionalProperties: false,
})

export const AnalyticsPeriodChangeSchema = Type.Object({
  completed: Type.Integer({ format: 'int32', minimum: -2_147_483_647, maximum: 2_147_483_647, description: '`period.completed` − `previous.completed`.' }),
  average_score: Nullable(Type.Number(), { description: '`period.average_score` − `previous.average_score`, computed exactly from the scores (then the nearest double); null when either is null.' }),
}, {
  $id: 'AnalyticsPeriodChange',
  title: 'AnalyticsPeriodChange',
  description: 'The period against the previous one.',
  additionalProperties: false,
})

/** The keys compare=previous_period adds, after the answer's own. */
export const PeriodComparison = {
  period: Type.Optional(Type.Ref(AnalyticsPeriodSchema)),
  previous: Type.Optional(Type.Ref(AnalyticsPreviousPeriodSchema)),
  change: Type.Optional(Type.Ref(AnalyticsPeriodChangeSchema)),
}
