import { sleep } from './sleep.js'

// Waits on what another process or a timer makes true (a standby's replay, a replica's state):
// polled, and bounded so that a test fails naming what it waited for rather than hanging.

/** Milliseconds until `condition` holds, asked every `everyMs`; undefined past `limitMs`. */
async function poll (condition: () => Promise<boolean> | boolean, limitMs: number, everyMs: number): Promise<number | undefined> {
  const started = performance.now()
  while (!await condition()) {
    if (performance.now() - started > limitMs) return undefined
    await sleep(everyMs)
  }
  return performance.now() - started
}

/** Milliseconds until `condition` holds, asked every `everyMs`; past `limitMs`, throws `what: not within …`. */
export async function until (what: string, condition: () => Promise<boolean> | boolean, limitMs: number, everyMs = 20): Promise<number> {
  const ms = await poll(condition, limitMs, everyMs)
  if (ms === undefined) throw new Error(`${what}: not within ${limitMs} ms`)
  return ms
}

/**
 * Whether `condition` holds within `limitMs`, asked every `everyMs`: for a wait after which the
 * test asserts on the state itself (or says why it failed, with what it has seen).
 */
export async function within (condition: () => Promise<boolean> | boolean, limitMs: number, everyMs = 20): Promise<boolean> {
  return await poll(condition, limitMs, everyMs) !== undefined
}
