// What must be undone however the run ends: child processes killed, the throwaway database
// dropped. Steps run newest first (servers stop before their database is dropped), on
// normal exit, on failure and on SIGINT/SIGTERM alike.

type Step = () => Promise<void> | void

const steps: Array<{ name: string, step: Step }> = []

/** Registers a step; the returned function unregisters it (once done by other means). */
export function onCleanup (name: string, step: Step): () => void {
  const entry = { name, step }
  steps.push(entry)
  return () => {
    const i = steps.indexOf(entry)
    if (i >= 0) steps.splice(i, 1)
  }
}

let running: Promise<void> | undefined

/** Runs every step once, in order; called again meanwhile (a signal, then the main flow's
 * own failure), it waits for the same run rather than dropping the database under a server. */
export async function cleanUp (): Promise<void> {
  running ??= (async () => {
    for (let entry = steps.pop(); entry !== undefined; entry = steps.pop()) {
      try {
        await entry.step()
      } catch (error) {
        console.error(`cleanup: ${entry.name} failed:`, error)
      }
    }
    running = undefined
  })()
  await running
}

let signalled: number | undefined

/** The exit status when a signal is stopping the bench (errors of the processes it killed
 * are then expected), else undefined. */
export const interrupted = (): number | undefined => signalled

/** On SIGINT/SIGTERM: clean up, then exit with the conventional 128 + signal number. */
export function cleanUpOnSignals (): void {
  for (const [signal, code] of [['SIGINT', 130], ['SIGTERM', 143]] as const) {
    process.on(signal, () => {
      if (signalled !== undefined) return // a second Ctrl-C while cleaning up: keep cleaning up
      signalled = code
      console.error(`\n${signal}: stopping children and dropping the bench database`)
      void cleanUp().finally(() => process.exit(code))
    })
  }
}
