import { setTimeout as sleep } from 'node:timers/promises'

// Waits on what another process or a timer makes true (a standby's replay, a replica's state):
// polled, and bounded so that a test fails naming what it waited for rather than hanging.

/** Milliseconds until `condition` holds, asked every `everyMs`; past `limitMs`, throws `what: not within …`. */
export async function until (what: string, condition: () => Promise<boolean> | boolean, limitMs: number, everyMs = 20): Promise<number> {
  const started = performance.now()
  while (!await condition()) {
    if (performance.now() - started > limitMs) throw new Error(`${what}: not within ${limitMs} ms`)
    await sleep(everyMs)
  }
  return performance.now() - started
}
