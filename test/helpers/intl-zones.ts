// Local time as the runtime's ICU reads it (Intl), an independent reference for the service's
// zone rules (moment-timezone's data, extended past 2499: src/zones/rules.ts). ICU computes a
// zone's last rule for any year; its tzdata release is the runtime's (Node 20: 2025c, Node
// 24: 2026c), older than the rules: compare where both releases agree.

const formats = new Map<string, Intl.DateTimeFormat>()
function format (zone: string): Intl.DateTimeFormat {
  let f = formats.get(zone)
  if (f === undefined) {
    f = new Intl.DateTimeFormat('en-US', { timeZone: zone, hourCycle: 'h23', year: 'numeric', month: '2-digit', day: '2-digit', hour: '2-digit', minute: '2-digit', second: '2-digit', era: 'short' })
    formats.set(zone, f)
  }
  return f
}

/** Whether the runtime knows `zone`. */
export function intlKnows (zone: string): boolean {
  try { format(zone); return true } catch { return false }
}

/** The zone's UTC offset at `seconds` (epoch), in seconds east, as Intl reads it. */
export function intlOffset (zone: string, seconds: number): number {
  const parts = Object.fromEntries(format(zone).formatToParts(new Date(seconds * 1000)).map(p => [p.type, p.value]))
  const year = parts.era === 'BC' ? 1 - Number(parts.year) : Number(parts.year)
  const local = Date.UTC(year, Number(parts.month) - 1, Number(parts.day), Number(parts.hour), Number(parts.minute), Number(parts.second)) / 1000
  return local - Math.floor(seconds)
}

/** The Monday (YYYY-MM-DD) of the local week `ms` (epoch) falls in, in `zone`, as Intl reads it. */
export function intlMondayOf (ms: number, zone: string): string {
  const local = new Date(Math.floor(ms / 1000) * 1000 + intlOffset(zone, ms / 1000) * 1000)
  const daysSinceMonday = (local.getUTCDay() + 6) % 7
  return new Date(Date.UTC(local.getUTCFullYear(), local.getUTCMonth(), local.getUTCDate() - daysSinceMonday)).toISOString().slice(0, 10)
}
