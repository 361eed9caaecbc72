/**
 * How long /docs takes to load in Debian's Chromium, as a reader opens it: from navigation to the
 * first operation group drawn (the document fetched, parsed and rendered). A fresh browser profile
 * loads it once (the first request: nothing cached), then reloads it RELOADS times in the same
 * profile (the browser's cache as a returning reader has it).
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
  await waitUntil('the server to answer', async () => ((await fetch(`${base}/api/v0/health/public`).catch(() => undefined))?.ok ? true : undefined), 20_000)
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
    const phases: { documentFetched: number; scriptsRun: number }[] = []
    const load = async (first: boolean): Promise<number> => {
      const started = performance.now()
      if (first) await page.goto(`${base}/docs`)
      else await page.reload()
      await page.locator('.opblock-tag-section').first().waitFor({ timeout: 60_000 })
      const elapsed = performance.now() - started
      // Evaluated in the page (a string: this file is type-checked without the DOM's types).
      const timing = (await page.evaluate(`(() => {
        const json = performance.getEntriesByType('resource').find((entry) => entry.name.endsWith('/docs/json'))
        const nav = performance.getEntriesByType('navigation')[0]
        return { documentFetched: json ? json.responseEnd : 0, scriptsRun: nav ? nav.domContentLoadedEventEnd : 0 }
      })()`)) as { documentFetched: number; scriptsRun: number }
      phases.push(timing)
      return elapsed
    }
    const firstMs = await load(true)
    const firstWire = new Map(wire)
    const reloads: number[] = []
    for (let i = 0; i < RELOADS; i++) reloads.push(await load(false))
    reloads.sort((a, b) => a - b)
    const median = reloads[Math.floor(reloads.length / 2)] ?? 0
    console.log(`/docs in Chromium, navigation to the first operation group drawn`)
    console.log(`  first load (empty cache):     ${firstMs.toFixed(0)} ms`)
    console.log(`  reload, median of ${RELOADS}:        ${median.toFixed(0)} ms (slowest ${(reloads.at(-1) ?? 0).toFixed(0)} ms)`)
    console.log(`first load, per request (status, body bytes on the wire, encoding):`)
    for (const [path, entry] of firstWire) console.log(`  ${path}  ${entry.status}  ${entry.bytes}  ${entry.encoding}`)
    console.log(`each load, ms from navigation to its scripts run / the document fetched: ${phases.map((p) => `${p.scriptsRun.toFixed(0)}/${p.documentFetched.toFixed(0)}`).join(' ')}`)
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
