import { existsSync } from 'node:fs'
import { chromium, type Browser } from 'playwright-core'

interface Teardown { teardown: (fn: () => unknown) => void }

/** Debian's `chromium` package; never a browser downloaded by Playwright. */
export const CHROMIUM_PATH = '/usr/bin/chromium'

/**
 * Why a browser test cannot run here, as a tap `skip` message, or false when it can.
 * On CI (`CI=true`) a missing browser is not a reason to skip: the test must fail (see `requireChromium`).
 */
export function chromiumSkip (what: string): string | false {
  if (existsSync(CHROMIUM_PATH) || process.env.CI === 'true') return false
  return `${CHROMIUM_PATH} not found: install Debian's chromium package to run the ${what} (apt-get install -y chromium)`
}

/** A headless Chromium, closed in the test's teardown. Throws when it is missing (CI installs it). */
export async function launchChromium (t: Teardown): Promise<Browser> {
  if (!existsSync(CHROMIUM_PATH)) throw new Error(`${CHROMIUM_PATH} is missing: CI must install Debian's chromium package (apt-get install -y chromium)`)
  const browser = await chromium.launch({
    executablePath: CHROMIUM_PATH,
    timeout: 30_000,
    // Without the background-networking flags Chromium's own connections are refused on a network-less machine.
    args: ['--headless', '--no-sandbox', '--disable-gpu', '--no-first-run', '--disable-background-networking', '--disable-component-update', '--disable-sync', '--disable-quic'],
  })
  t.teardown(async () => { await browser.close() })
  return browser
}
