/** The signals that stop the service; close-with-grace is told to leave them to `onStopSignals`. */
export const STOP_SIGNALS = ['SIGINT', 'SIGTERM'] as const

/** A repeat within this long is the same request, relayed (measured: milliseconds apart). */
const RELAYED_WITHIN_MS = 1_000

/**
 * Runs `stop` once on SIGINT or SIGTERM. Ctrl-C in a terminal reaches the whole process group,
 * and npm and tsx relay it again: under `npm start` one Ctrl-C is two or three SIGINTs, and
 * close-with-grace took the second for a person insisting and exited skipping the close. A
 * repeat within a second is ignored; a later one still exits at once.
 */
export function onStopSignals (stop: (signal: NodeJS.Signals) => void): void {
  let first: number | undefined
  for (const signal of STOP_SIGNALS) {
    process.on(signal, () => {
      if (first === undefined) {
        first = Date.now()
        stop(signal)
      } else if (Date.now() - first >= RELAYED_WITHIN_MS) {
        console.error(`second ${signal}, exiting`)
        process.exit(1)
      }
    })
  }
}
