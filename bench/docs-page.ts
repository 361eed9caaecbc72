/**
 * How long /docs takes to become usable in Debian's Chromium, as a reader opens it: from
 * navigation to the page loaded with its list of operations drawn, then to one operation's
 * details shown (customerControllerCreate's example body). A fresh browser profile loads it once
 * (the first request: nothing cached), then reloads it RELOADS times in the same profile (the
 * browser's cache as a returning reader has it). It measures the server-rendered reference and,
 * given an older build, the Swagger UI page that preceded it.
 *
 *   npm run bench:docs                              this checkout's build
 *   npx tsx bench/docs-page.ts OTHER/dist/server.js  another build (e.g. before a change), same browser
 *
 * Prints the first load, the median and slowest reload, and what each asset costs on the wire.
 */
import { mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { chromium } from 'playwright-core'
import { cleanUp, freshDb, launch, type Running, waitUntil } from '../test/processes.js'

const CHROMIUM = '/usr/bin/chromium'
const RELOADS = 7
const ARGS = ['--headless', '--no-sandbox', '--disable-gpu', '--disable-quic', '--no-first-run', '--disable-background-networking', '--disable-component-update', '--disable-sync']

async function main(): Promise<void> {
  const { url } = freshDb('devplatform-bench-docs-')
  const port = 20_000 + Math.floor(Math.random() * 20_000)
  const server: Running = launch(process.argv[2] ?? join(import.meta.dirname, '..', 'dist', 'server.js'), [], { DATABASE_URL: url, PORT: String(port), NODE_ENV: 'test', LOG_LEVEL: 'warn' })
  const base = `http://127.0.0.1:${port}`
  await waitUntil('the server to answer', async () => ((await fetch(`${base}/api/v0/health/public`).catch(() => undefined))?.ok ? true : undefined), 60_000)
  const profile = mkdtempSync(join(tmpdir(), 'devplatform-bench-chromium-'))
  const browser = await chromium.launchPersistentContext(profile, { executablePath: CHROMIUM, args: ARGS, viewport: { width: 1280, height: 900 } })
  try {
    const page = browser.pages()[0] ?? (await browser.newPage())
    const wire = new Map<string, { status: number; bytes: number; encoding: string }>()
    page.on('response', (response) => {
      void response.request().sizes().then((sizes) => {
        const path = new URL(response.url()).pathname
        wire.set(path, { status: response.status(), bytes: sizes.responseBodySize, encoding: response.headers()['content-encoding'] ?? 'identity' })
      }).catch(() => undefined)
    })
    /** Navigation to the operations listed, and to one operation's details shown. */
    const load = async (first: boolean): Promise<{ listed: number; opened: number }> => {
      const started = performance.now()
      if (first) await page.goto(`${base}/docs`)
      else await page.reload()
      await page.locator('.opblock-tag-section, nav.contents a').first().waitFor({ timeout: 60_000 })
      const listed = performance.now() - started
      const swaggerUi = (await page.locator('.opblock-tag-section').count()) > 0
      if (swaggerUi) {
        const operation = page.locator('[id$="-customerControllerCreate"]')
        await operation.locator('.opblock-summary').click()
        await operation.locator('.microlight').first().waitFor({ timeout: 60_000 })
      } else {
        await page.locator('nav.contents a[href="#customerControllerCreate"]').click()
        await page.locator('#customerControllerCreate pre').first().waitFor({ timeout: 60_000 })
      }
      return { listed, opened: performance.now() - started }
    }
    const first = await load(true)
    const firstWire = new Map(wire)
    const reloads: { listed: number; opened: number }[] = []
    for (let i = 0; i < RELOADS; i++) reloads.push(await load(false))
    const median = (values: number[]) => [...values].sort((a, b) => a - b)[Math.floor(values.length / 2)] ?? 0
    const opened = reloads.map((entry) => entry.opened)
    console.log(`/docs in Chromium, ms from navigation to the page loaded with its operations listed / to an operation's details shown`)
    console.log(`  first load (empty cache):     ${first.listed.toFixed(0)} / ${first.opened.toFixed(0)} ms`)
    console.log(`  reload, median of ${RELOADS}:        ${median(reloads.map((entry) => entry.listed)).toFixed(0)} / ${median(opened).toFixed(0)} ms (slowest shown ${Math.max(...opened).toFixed(0)} ms)`)
    console.log(`  each reload: ${reloads.map((entry) => `${entry.listed.toFixed(0)}/${entry.opened.toFixed(0)}`).join(' ')}`)
    console.log(`first load, per request (status, body bytes on the wire, encoding):`)
    for (const [path, entry] of firstWire) console.log(`  ${path}  ${entry.status}  ${entry.bytes}  ${entry.encoding}`)
    const icon = await fetch(`${base}/favicon.ico`)
    console.log(`/favicon.ico: ${icon.status}`)
  } finally {
    await browser.close()
    rmSync(profile, { recursive: true, force: true })
    server.child.kill('SIGTERM')
    cleanUp()
  }
}

await main()
