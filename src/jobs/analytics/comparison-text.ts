// compare=previous_period's figures as the statements write them, and where they read
// (period-comparison.ts makes the window; body.ts writes the answer's keys).

/** Where a comparison reads: the previous range, the weeks of both (Mondays), and the Monday between them. */
export interface ComparisonWindow { previous: { from: string, to: string }, weeks: { first: string, last: string }, splitAt: string }

/** A period's completions and their mean, as PostgreSQL wrote it. */
export interface PeriodText { completed: number, averageScore: string | null }

/** The range's figures, the previous range's (with its bins), the exact difference of their means. */
export interface ComparisonText { period: PeriodText, previous: PeriodText & { bins: string | null }, averageChange: string | null }
