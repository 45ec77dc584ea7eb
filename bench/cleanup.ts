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

export async function cleanUp (): Promise<void> {
  for (let entry = steps.pop(); entry !== undefined; entry = steps.pop()) {
    try {
      await entry.step()
    } catch (error) {
      console.error(`cleanup: ${entry.name} failed:`, error)
    }
  }
}

let signalled = false

/** On SIGINT/SIGTERM: clean up, then exit with the conventional 128 + signal number. */
export function cleanUpOnSignals (): void {
  for (const [signal, code] of [['SIGINT', 130], ['SIGTERM', 143]] as const) {
    process.on(signal, () => {
      if (signalled) return // a second Ctrl-C while cleaning up: keep cleaning up
      signalled = true
      console.error(`\n${signal}: stopping children and dropping the bench database`)
      void cleanUp().finally(() => process.exit(code))
    })
  }
}
