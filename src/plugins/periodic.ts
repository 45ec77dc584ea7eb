import type { FastifyInstance } from 'fastify'

/**
 * Runs `task` every `intervalMs` (never two at once), until the app starts closing; closing
 * waits for a run under way. A failing run is logged once at warn (`what`), and its recovery
 * at info: a database away for a minute is one warning, not sixty. The timer keeps no
 * process alive. Needs the draining plugin, which says when closing starts.
 */
export function runPeriodically (app: FastifyInstance, what: string, intervalMs: number, task: () => Promise<void>): void {
  let running: Promise<void> | undefined
  let failing = false
  const tick = async (): Promise<void> => {
    try {
      await task()
      if (failing) app.log.info(`${what}: working again`)
      failing = false
    } catch (err) {
      if (!failing) app.log.warn({ err }, `${what}: failed; will retry`)
      failing = true
    }
  }
  // Checked at each tick, not cleared in a preClose hook: those run after the drain's.
  const timer = setInterval(() => {
    if (!app.draining()) running ??= tick().finally(() => { running = undefined })
  }, intervalMs)
  timer.unref()
  app.addHook('onClose', async () => {
    clearInterval(timer)
    await running
  })
}
