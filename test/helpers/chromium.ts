import { existsSync, mkdtempSync, readFileSync, rmSync } from 'node:fs'
import { createRequire } from 'node:module'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { type BrowserContext, chromium, type Page } from 'playwright-core'

/** Debian's Chromium driven by Playwright, and the page checks every page test makes (axe-core, overflow). */

const CHROMIUM = '/usr/bin/chromium'
const CHROMIUM_ARGS = ['--headless', '--no-sandbox', '--disable-gpu', '--disable-quic', '--no-first-run', '--disable-background-networking', '--disable-component-update', '--disable-sync']
const AXE = readFileSync(createRequire(import.meta.url).resolve('axe-core/axe.min.js'), 'utf8')

export interface Browser {
  page: Page
  close: () => Promise<void>
}

/** One headless Chromium with a profile of its own, removed on close. */
export async function launchChromium(): Promise<Browser> {
  if (!existsSync(CHROMIUM)) throw new Error(`${CHROMIUM} is missing: install Debian's Chromium (apt-get install -y --no-install-recommends chromium; .ci/run does)`)
  const userDataDir = mkdtempSync(join(tmpdir(), 'devplatform-chromium-'))
  const context: BrowserContext = await chromium.launchPersistentContext(userDataDir, { executablePath: CHROMIUM, args: CHROMIUM_ARGS, viewport: { width: 1280, height: 900 } })
  const page = context.pages()[0] ?? (await context.newPage())
  return {
    page,
    close: async () => {
      await context.close()
      rmSync(userDataDir, { recursive: true, force: true })
    },
  }
}

/** At `width` px: how far the page overflows sideways, and axe-core's serious and critical findings. */
export async function pageChecks(page: Page, width: number): Promise<{ overflow: number; violations: string[] }> {
  await page.setViewportSize({ width, height: 900 })
  const { scrollWidth, clientWidth } = await page.evaluate<{ scrollWidth: number; clientWidth: number }>('({ scrollWidth: document.documentElement.scrollWidth, clientWidth: document.documentElement.clientWidth })')
  await page.evaluate(AXE)
  const violations = await page.evaluate<string[]>(
    `axe.run(document).then((result) => result.violations.filter((violation) => violation.impact === 'serious' || violation.impact === 'critical').map((violation) => violation.id + ': ' + violation.nodes.slice(0, 3).map((node) => node.html).join(' | ')))`,
  )
  return { overflow: scrollWidth - clientWidth, violations }
}
