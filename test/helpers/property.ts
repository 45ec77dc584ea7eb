import fc from 'fast-check'

interface Comments { comment: (...message: unknown[]) => void }

/**
 * Runs a property with a fixed seed (reproducible in CI) and then with a random one that is
 * printed, so a failure found by chance can be replayed: PROPERTY_SEED=<seed> npm test.
 */
export async function checkProperty<T> (t: Comments, name: string, arbitrary: fc.Arbitrary<T>, predicate: (value: T) => Promise<void>, numRuns = 200): Promise<void> {
  const replay = process.env.PROPERTY_SEED
  const seeds = replay !== undefined ? [Number(replay)] : [20260105, Math.floor(Math.random() * 2 ** 31)]
  for (const seed of seeds) {
    const started = Date.now()
    await fc.assert(fc.asyncProperty(arbitrary, predicate), { seed, numRuns, endOnFailure: false })
    t.comment(`property "${name}": ${numRuns} cases passed with seed ${seed} in ${Date.now() - started} ms (replay: PROPERTY_SEED=${seed})`)
  }
}

/**
 * Equal, or equal but for the last bits: the database sums floating-point scores in another
 * order than a reference does.
 */
export const closeEnough = (a: number | null, b: number | null): boolean =>
  a === b || (a !== null && b !== null && Math.abs(a - b) <= 1e-9 * Math.max(1, Math.abs(b)))

/** The smallest normal double. */
export const MIN_NORMAL_DOUBLE = 2.2250738585072014e-308

/**
 * A score the schema accepts: 0 to 100, never subnormal (screens_score_representable), the
 * edges included. A subnormal one drawn is 0.
 */
export const storableScore: fc.Arbitrary<number> = fc.oneof(
  { weight: 6, arbitrary: fc.double({ min: 0, max: 100, noNaN: true }).map(x => x < MIN_NORMAL_DOUBLE ? 0 : x) },
  { weight: 1, arbitrary: fc.constantFrom(0, 100, MIN_NORMAL_DOUBLE) }
)
