import type { ChangePosition } from '../changes/log-page.js'
import { parseSnapshot, snapshotText, type Snapshot } from '../changes/snapshot.js'

// Where an endpoint's events stand in the change log: a sync token's point (what every
// dispatch since the endpoint was made has seen), and, while a dispatch was cut short, where
// its pages stopped and what they saw so far, as a sync's cursor. Stored as JSON on the
// endpoint (webhook_endpoints.position); docs/webhooks-design.md.

export interface EndpointPosition {
  /** Changes not visible in this snapshot are still to be sent. */
  since: Snapshot
  generation: number
  /** The database history (src/changes/history.ts). */
  history: string
  /** Whether every dispatch since reported what only analytics show (false: some skipped it). */
  analytics: boolean
  /** Whether every dispatch since reported the jobs' changes (false: the key could not read jobs). */
  jobs: boolean
  /** A dispatch cut short: where its next page starts, and what its pages saw. */
  resume?: { after: ChangePosition, seen: Snapshot }
  /** When `since` was taken (epoch ms), if known: a quiet endpoint's position moves only once it is old. */
  at?: number
}

interface Stored { x: string, g: number, h: string, a: boolean, j: boolean, r?: { xid: string, job: string, x: string }, t?: number }

export function storedPosition (position: EndpointPosition): Stored {
  const stored: Stored = { x: snapshotText(position.since), g: position.generation, h: position.history, a: position.analytics, j: position.jobs }
  if (position.resume !== undefined) stored.r = { xid: position.resume.after.xid, job: position.resume.after.jobId, x: snapshotText(position.resume.seen) }
  if (position.at !== undefined) stored.t = position.at
  return stored
}

/** The position a stored one names; undefined when it is not one (a database edited by hand): the endpoint starts over. */
export function readPosition (value: unknown): EndpointPosition | undefined {
  const stored = value as Partial<Stored> | null
  if (stored === null || typeof stored !== 'object' || typeof stored.x !== 'string' || !Number.isSafeInteger(stored.g) || typeof stored.h !== 'string') return undefined
  const since = parseSnapshot(stored.x)
  if (since === undefined) return undefined
  const position: EndpointPosition = { since, generation: stored.g!, history: stored.h, analytics: stored.a !== false, jobs: stored.j !== false }
  if (Number.isSafeInteger(stored.t)) position.at = stored.t!
  if (stored.r !== undefined) {
    const seen = typeof stored.r?.x === 'string' ? parseSnapshot(stored.r.x) : undefined
    if (seen === undefined || typeof stored.r.xid !== 'string' || typeof stored.r.job !== 'string') return undefined
    position.resume = { after: { xid: stored.r.xid, jobId: stored.r.job }, seen }
  }
  return position
}
