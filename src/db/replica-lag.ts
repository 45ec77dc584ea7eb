// How far a replica is behind, measured against the primary's WAL position rather than the
// replica's own view: every check samples the primary's position, and a replica's lag is
// the age of the newest sample its replay has reached (0 when it has reached the current
// one). This holds on an idle primary (nothing to replay is no lag) and finds a replica cut
// off from its primary (the primary moves on, the replica does not); it needs no privilege
// (pg_stat_wal_receiver hides its state from a role like the API's). Resolution: one
// check interval.

interface Sample { at: number, lsn: bigint }

/** The primary's WAL position at recent checks, oldest first, and a replica's lag against them. */
export class PrimaryPositions {
  private samples: Sample[] = []

  add (at: number, lsn: string): void { this.samples.push({ at, lsn: lsnValue(lsn) }) }

  /** Keeps the samples from `at` on (and the newest, always). */
  forgetBefore (at: number): void {
    while (this.samples.length > 1 && this.samples[0]!.at < at) this.samples.shift()
  }

  /** How far behind a replica replaying `lsn` is, ms; null: behind every sample kept, i.e. further behind than the bound by far. */
  lagOf (lsn: string | null): number | null {
    if (lsn === null || this.samples.length === 0) return null
    const replayed = lsnValue(lsn)
    const newest = this.samples[this.samples.length - 1]!
    if (replayed >= newest.lsn) return 0
    for (let i = this.samples.length - 2; i >= 0; i--) {
      // It has what the primary had at sample i, not all it had at i + 1: count from i.
      if (replayed >= this.samples[i]!.lsn) return newest.at - this.samples[i]!.at
    }
    return null
  }
}

/** A pg_lsn ("16/B374D848") as a number. */
export const lsnValue = (lsn: string): bigint => {
  const [high, low] = lsn.split('/')
  return (BigInt(`0x${high}`) << 32n) + BigInt(`0x${low}`)
}
