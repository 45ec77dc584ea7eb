// Durations as the configuration writes them (`5s`, `30m`, `10h`, `5d`, `250ms`).

const UNIT_MS: Record<string, number> = { ms: 1, s: 1000, m: 60_000, h: 3_600_000, d: 86_400_000 }

/** Milliseconds of one duration (config.ts's pattern has checked its form). */
export function durationMs (text: string): number {
  const match = /^(\d+)(ms|s|m|h|d)$/.exec(text.trim())
  if (match === null) throw new Error(`not a duration: ${JSON.stringify(text)} (a number and ms, s, m, h or d)`)
  return Number(match[1]) * UNIT_MS[match[2]!]!
}

/** Milliseconds of each duration of a comma-separated list. */
export const durationsMs = (list: string): number[] => list.split(',').map(durationMs)
